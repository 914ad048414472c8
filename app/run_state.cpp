// The rules by which records are taken while tracing and during a stop.
#include "app/run_state.h"

#include "common/stop_request.h"
#include "run/stop_signals.h"
#include "script/lua_interrupt.h"

namespace mt {

RunState::RunState() : signals(stop_signal_count) {}

RunState::Take RunState::take() {
  events++;
  if (!stopping)
    return Take::Process;
  // A first stop signal during a stop nobody asked for (the traced
  // work ended) bounds it as if it had stopped tracing; a second cuts.
  if (process_until == Clock::time_point::max() && signals() > signals_at_stop)
    begin_stop(true);
  auto at = now();
  if (at >= count_until) {
    unprocessed++;
    return Take::CountAndHalt;
  }
  if (at >= process_until || signals() > signals_at_stop) {
    if (count_until == Clock::time_point::max())
      count_until = at + kStopCounting;
    unprocessed++;
    return Take::Count;
  }
  return Take::Process;
}

bool RunState::keep_taking() const {
  return stopping || !(signals() > 0 || (events % 64 == 0 && now() >= slice_end));
}

void RunState::end_after(Clock::time_point start, double seconds) {
  if (seconds > 0)
    deadline =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  set_lua_limits(0, deadline);
  set_stop_deadline(deadline);
}

void RunState::begin_stop(bool bounded) {
  stopping = true;
  request_stop();  // an output whose reader stopped reading is given up
  signals_at_stop = signals();
  if (bounded) {
    process_until = now() + kStopProcessing;
    count_until = process_until + kStopCounting;
  }
  set_lua_limits(signals_at_stop, process_until);
}

}  // namespace mt
