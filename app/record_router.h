// Sends each record taken from the buffers where it goes: the trace (to be
// drawn later, in time order), the script's handler, or the text or JSON
// output; thread names to the trace. The destinations are given as plain
// functions, so the routing is tested without a kernel, Lua or a file.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "app/run_state.h"

namespace mt {

struct RecordLayout;

class RecordRouter {
 public:
  using Bytes = const unsigned char *;
  // Per probe id: how to read its records (none: they are ignored) and
  // where they go.
  struct Probe {
    const RecordLayout *layout = nullptr;
    bool drawn = false;    // the trace draws it
    bool handled = false;  // the script has a handler for it
  };
  struct Destinations {
    std::function<void(Bytes, uint32_t)> thread_named;  // a thread-name record, for the trace
    // The trace keeps a drawn record; returns when it is to be drawn.
    std::function<uint64_t(uint32_t id, Bytes, uint32_t)> arrived;
    std::function<void(uint32_t id, Bytes, uint32_t)> handle;  // the script's handler
    std::function<void(uint32_t id, Bytes, uint32_t)> print;   // neither drawn nor handled
  };

  RecordRouter(std::vector<Probe> probes, uint32_t thread_name_slot, Destinations to,
               RunState &state);

  // The record `data`: routed, counted or ignored by the rules of
  // RunState. A handler's error is kept in state.failure (its handlers
  // run no more); an interrupted handler counts as unprocessed. Returns
  // false to hand control back to the loop. EventStream::Consumer::take.
  bool take(Bytes data, uint32_t size, uint64_t &draw_at);

 private:
  std::vector<Probe> probes_;
  uint32_t thread_name_slot_;
  Destinations to_;
  RunState &state_;
};

}  // namespace mt
