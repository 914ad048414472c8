// The loop that runs while tracing, on a clock that waiting moves on.
#include "app/run_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "script/lua_interrupt.h"

namespace mt {
namespace {

using Clock = RunState::Clock;
using std::chrono::milliseconds;
Clock::time_point g_now;

class RunLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_now = Clock::time_point{};
    state.now = [] { return g_now; };
    state.signals = [] { return 0; };
    // Waiting passes the time asked for; each take finds `found` bytes.
    records.wait = [this](int timeout_ms) {
      waits++;
      g_now += milliseconds(timeout_ms);
    };
    records.take = [this] {
      takes++;
      return found.empty() ? uint64_t(0) : found[(takes - 1) % found.size()];
    };
  }
  void TearDown() override { set_lua_limits(0, Clock::time_point::max()); }

  std::function<StopCause()> stop_at(Clock::time_point end) {
    return [end] { return g_now >= end ? StopCause::Duration : StopCause::None; };
  }

  RunState state;
  RunLoop::Records records;
  int waits = 0, takes = 0;
  std::vector<uint64_t> found;
  std::vector<int> fired;
  std::function<void()> nothing = [] {};
  std::function<void(int)> fire = [this](int id) { fired.push_back(id); };
};

TEST_F(RunLoopTest, StopsWithTheCauseItIsGiven) {
  auto cause = RunLoop(state).run(
      records, [] { return StopCause::Signal; }, nothing, fire);
  EXPECT_EQ(cause, StopCause::Signal);
  EXPECT_EQ(takes, 0);
}

TEST_F(RunLoopTest, LooksForRecordsEveryTenMilliseconds) {
  RunLoop loop(state);
  loop.run(records, stop_at(Clock::time_point{} + milliseconds(100)), nothing, fire);
  EXPECT_EQ(waits, 10);
  EXPECT_EQ(takes, 10);
}

TEST_F(RunLoopTest, WaitsNoLongerThanTheDuration) {
  state.deadline = Clock::time_point{} + milliseconds(25);
  RunLoop(state).run(records, stop_at(state.deadline), nothing, fire);
  EXPECT_EQ(g_now, state.deadline);
}

TEST_F(RunLoopTest, TakesAgainAtOnceWhileRecordsKeepComing) {
  found = {kBusyTakeBytes, kBusyTakeBytes, 0};
  RunLoop(state).run(records, stop_at(Clock::time_point{} + milliseconds(20)), nothing, fire);
  // wait, take (busy), take (busy), take (little), wait, take: 20 ms
  EXPECT_EQ(takes, 4);
  EXPECT_EQ(waits, 2);
}

TEST_F(RunLoopTest, TimersFireOncePerPeriod) {
  RunLoop loop(state);
  loop.add_timer(7, milliseconds(25), g_now);
  loop.add_timer(8, milliseconds(40), g_now);
  loop.run(records, stop_at(Clock::time_point{} + milliseconds(100)), nothing, fire);
  // At 25, 50 and 75 ms, and at 40 and 80: none once the stop is due.
  EXPECT_EQ(std::count(fired.begin(), fired.end(), 7), 3);
  EXPECT_EQ(std::count(fired.begin(), fired.end(), 8), 2);
}

TEST_F(RunLoopTest, ASlowTimerIsNotCalledInABurstToCatchUp) {
  RunLoop loop(state);
  loop.add_timer(7, milliseconds(10), g_now);
  loop.run(records, stop_at(Clock::time_point{} + milliseconds(100)), nothing, [&](int id) {
    fired.push_back(id);
    g_now += milliseconds(35);  // the handler takes 3.5 periods
  });
  // Due at 10, then at 45+10 (not 20, 30, 40), then 90+10: three calls.
  EXPECT_EQ(fired.size(), 3u);
}

TEST_F(RunLoopTest, ChoresRunAtTheirPeriods) {
  RunLoop loop(state);
  int flushes = 0, checks = 0;
  loop.every(std::chrono::seconds(1), g_now, [&](auto) { flushes++; });
  loop.every(milliseconds(100), g_now, [&](auto) { checks++; });
  loop.run(records, stop_at(Clock::time_point{} + milliseconds(2500)), nothing, fire);
  EXPECT_EQ(flushes, 2);
  EXPECT_EQ(checks, 25);
}

TEST_F(RunLoopTest, BeginRunsFirstAndAnErrorThereStopsWithFailure) {
  auto cause = RunLoop(state).run(
      records, [] { return StopCause::None; }, [] { throw Error("begin failed"); }, fire);
  EXPECT_EQ(cause, StopCause::Failure);
  ASSERT_TRUE(state.failure);
  EXPECT_STREQ(state.failure->what(), "begin failed");
  EXPECT_EQ(takes, 0);
}

TEST_F(RunLoopTest, AnErrorTakingRecordsIsKeptAsTheFailure) {
  records.take = []() -> uint64_t { throw std::runtime_error("ring gone"); };
  auto cause = RunLoop(state).run(
      records, [] { return StopCause::None; }, nothing, fire);
  EXPECT_EQ(cause, StopCause::Failure);
  ASSERT_TRUE(state.failure);
  EXPECT_STREQ(state.failure->what(), "ring gone");
}

}  // namespace
}  // namespace mt
