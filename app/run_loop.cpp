// The loop that takes records, runs due timers and chores until a stop.
#include "app/run_loop.h"

#include <algorithm>
#include <exception>

#include "common/error.h"

namespace mt {

void RunLoop::add_timer(int decl_id, Clock::duration period, Clock::time_point start) {
  timers_.push_back({decl_id, period, start + period});
}

void RunLoop::every(Clock::duration period, Clock::time_point start,
                    std::function<void(Clock::time_point)> chore) {
  chores_.push_back({period, start + period, std::move(chore)});
}

StopCause RunLoop::run(Records records, const std::function<StopCause()> &why_stop,
                       const std::function<void()> &begin,
                       const std::function<void(int)> &on_timer) {
  // An error is kept for after the outputs are finished, so that the
  // trace written so far stays whole.
  try {
    begin();
    return loop(records, why_stop, on_timer);
  } catch (const Error &e) {
    if (!state_.failure)
      state_.failure = e;
  } catch (const std::exception &e) {
    if (!state_.failure)
      state_.failure = Error(e.what());
  }
  return StopCause::Failure;
}

StopCause RunLoop::loop(Records &records, const std::function<StopCause()> &why_stop,
                        const std::function<void(int)> &on_timer) {
  uint64_t taken = 0;  // bytes, by the last take
  StopCause cause;
  while ((cause = why_stop()) == StopCause::None) {
    auto now = state_.now();
    auto wake = std::min(state_.deadline, now + kLookEvery);
    for (const auto &t : timers_)
      wake = std::min(wake, t.due);
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
    // Records rarely wake us (see mt_reserve): after a take that found
    // little, wait for a wake-up or the next look; while they keep
    // coming, take again at once.
    if (taken < kBusyTakeBytes)
      records.wait(static_cast<int>(std::max<decltype(timeout)>(timeout, 0)));
    state_.slice_end = state_.now() + kPollSlice;
    taken = records.take();
    now = state_.now();
    for (auto &c : chores_)
      if (now >= c.due) {
        c.run(now);
        c.due = now + c.period;
      }
    for (auto &t : timers_) {
      if (now < t.due || why_stop() != StopCause::None)
        continue;
      // A handler slower than its period runs once per call, not in a burst.
      t.due += t.period;
      if (t.due < now)
        t.due = now + t.period;
      on_timer(t.decl_id);
    }
  }
  return cause;
}

}  // namespace mt
