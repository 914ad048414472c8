// How records are taken while tracing and during a stop: while tracing,
// each take or drain hands back control at least every 100 ms (to run
// timers and notice a stop). After a requested stop, buffered records are
// processed for 0.5 s, then only counted for 0.5 s more, so that a slow
// handler under a storm of events cannot hold the stop back; after the
// traced work ended by itself, all are processed unless a stop signal
// comes. The clock and the count of stop signals are given, so the rules
// are tested without either.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>

#include "common/error.h"

namespace mt {

inline constexpr auto kStopProcessing = std::chrono::milliseconds(500);
inline constexpr auto kStopCounting = std::chrono::milliseconds(500);

struct RunState {
  using Clock = std::chrono::steady_clock;
  Clock::time_point (*now)() = Clock::now;
  int (*signals)();  // stop signals so far; stop_signal_count() unless a test says

  RunState();

  uint64_t events = 0;
  uint64_t unprocessed = 0;      // taken after the stop's time ran out, or whose handler was cut
  std::optional<Error> failure;  // raised while tracing, reported once the outputs are finished
  bool stopping = false;
  int signals_at_stop = 0;  // a stop signal beyond these cuts the stop short
  Clock::time_point slice_end = Clock::time_point::max();
  Clock::time_point process_until = Clock::time_point::max();
  Clock::time_point count_until = Clock::time_point::max();
  Clock::time_point deadline = Clock::time_point::max();  // --duration

  enum class Take { Process, Count, CountAndHalt };
  // What to do with a record just taken from a buffer.
  Take take();
  // Whether to take more records after one was processed, or let the loop
  // see a stop, a due timer or the end of the duration.
  bool keep_taking() const;
  // --duration: the run ends SECONDS (if not 0) after START; a handler,
  // interval or begin probe that loops, or a write blocked on a reader
  // that stopped reading, is cut then.
  void end_after(Clock::time_point start, double seconds);
  // Enters the stop; `bounded` when it was asked for. Lua is interrupted
  // by the same rules.
  void begin_stop(bool bounded);
};

}  // namespace mt
