// The loop that runs while tracing: takes records as they come, runs the
// script's interval handlers when due and the periodic chores (flush,
// loss marks, the status line), until something says stop. Records,
// handlers and chores are given as plain functions and the clock is
// RunState's, so the loop is tested without a kernel.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "app/run_state.h"

namespace mt {

// Why tracing stopped.
enum class StopCause { None, Signal, Duration, ScriptExit, CommandExited, TargetExited, Failure };

// A take that found at least this many bytes takes again at once.
inline constexpr uint64_t kBusyTakeBytes = 64 << 10;
// Probes wake the loop only when a ring is filling up: it looks this often.
inline constexpr auto kLookEvery = std::chrono::milliseconds(10);
// Each take or drain hands back control at least this often (RunState).
inline constexpr auto kPollSlice = std::chrono::milliseconds(100);

class RunLoop {
 public:
  using Clock = RunState::Clock;
  // Where records come from: wait until some may be there (or the
  // timeout, in ms, passed), then take them, returning the bytes taken.
  struct Records {
    std::function<void(int timeout_ms)> wait;
    std::function<uint64_t()> take;
  };

  explicit RunLoop(RunState &state) : state_(state) {}

  // The interval handler `decl_id`, first due one period after `start`.
  void add_timer(int decl_id, Clock::duration period, Clock::time_point start);
  // `chore` runs every `period` from `start` on, given the time.
  void every(Clock::duration period, Clock::time_point start,
             std::function<void(Clock::time_point)> chore);

  // Calls `begin`, then runs until `why_stop` says why; due timers call
  // `on_timer`. An error thrown in here is kept in state.failure and
  // stops with Failure.
  StopCause run(Records records, const std::function<StopCause()> &why_stop,
                const std::function<void()> &begin,
                const std::function<void(int decl_id)> &on_timer);

 private:
  struct Timer {
    int decl_id;
    Clock::duration period;
    Clock::time_point due;
  };
  struct Chore {
    Clock::duration period;
    Clock::time_point due;
    std::function<void(Clock::time_point)> run;
  };
  StopCause loop(Records &records, const std::function<StopCause()> &why_stop,
                 const std::function<void(int)> &on_timer);

  RunState &state_;
  std::vector<Timer> timers_;
  std::vector<Chore> chores_;
};

}  // namespace mt
