// Routes each record taken from the buffers to the trace, a handler or the output.
#include "app/record_router.h"

#include <cstring>

#include "common/error.h"
#include "script/lua_interrupt.h"

namespace mt {

RecordRouter::RecordRouter(std::vector<Probe> probes, uint32_t thread_name_slot, Destinations to,
                           RunState &state)
    : probes_(std::move(probes)),
      thread_name_slot_(thread_name_slot),
      to_(std::move(to)),
      state_(state) {}

bool RecordRouter::take(Bytes data, uint32_t size, uint64_t &draw_at) {
  if (size < 4)
    return true;
  uint32_t id;
  std::memcpy(&id, data, 4);
  if (id == thread_name_slot_ && to_.thread_named) {
    to_.thread_named(data, size);
    return true;
  }
  if (id >= probes_.size() || !probes_[id].layout)
    return true;
  RunState::Take take = state_.take();
  if (take != RunState::Take::Process)
    return take == RunState::Take::Count;
  bool keep_taking = state_.keep_taking();
  const Probe &probe = probes_[id];
  try {
    if (probe.drawn)
      draw_at = to_.arrived(id, data, size);
    if (probe.handled) {
      if (state_.failure)  // the script is broken: its handlers run no more
        return state_.stopping;
      to_.handle(id, data, size);
    } else if (!probe.drawn) {
      to_.print(id, data, size);
    }
  } catch (const LuaInterrupted &) {
    state_.unprocessed++;
    return state_.stopping;  // while stopping, the next records are counted
  } catch (const Error &e) {
    if (!state_.failure)
      state_.failure = e;
    return state_.stopping;  // while stopping, the next records are still drawn
  }
  return keep_taking;
}

}  // namespace mt
