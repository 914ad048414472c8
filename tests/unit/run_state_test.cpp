// The rules by which records are taken while tracing and during a stop,
// on a clock and a signal count the test sets.
#include "app/run_state.h"

#include <gtest/gtest.h>

#include "script/lua_interrupt.h"

namespace mt {
namespace {

using Clock = RunState::Clock;
Clock::time_point g_now;
int g_signals = 0;

// begin_stop() gives Lua the stop's limits, on this test's clock: the
// tests after these must not find Lua already past its deadline.
class RunStateTest : public ::testing::Test {
 protected:
  void TearDown() override { set_lua_limits(0, Clock::time_point::max()); }
};

RunState state_at(Clock::time_point now) {
  g_now = now;
  g_signals = 0;
  RunState state;
  state.now = [] { return g_now; };
  state.signals = [] { return g_signals; };
  return state;
}

TEST_F(RunStateTest, ProcessesEverythingWhileTracing) {
  RunState state = state_at(Clock::time_point{});
  for (int i = 0; i < 3; i++)
    EXPECT_EQ(state.take(), RunState::Take::Process);
  EXPECT_EQ(state.events, 3u);
  EXPECT_EQ(state.unprocessed, 0u);
}

TEST_F(RunStateTest, AnAskedForStopProcessesForHalfASecondThenCountsThenHalts) {
  RunState state = state_at(Clock::time_point{});
  state.begin_stop(true);
  EXPECT_EQ(state.take(), RunState::Take::Process);
  g_now += kStopProcessing;
  EXPECT_EQ(state.take(), RunState::Take::Count);
  g_now += kStopCounting;
  EXPECT_EQ(state.take(), RunState::Take::CountAndHalt);
  EXPECT_EQ(state.unprocessed, 2u);
}

TEST_F(RunStateTest, WhenTheWorkEndedByItselfOnlyASignalBoundsTheDrain) {
  RunState state = state_at(Clock::time_point{});
  state.begin_stop(false);
  g_now += std::chrono::seconds(60);
  EXPECT_EQ(state.take(), RunState::Take::Process);  // no bound: everything is processed
  g_signals = 1;                                     // a first Ctrl-C bounds it
  EXPECT_EQ(state.take(), RunState::Take::Process);
  EXPECT_EQ(state.process_until, g_now + kStopProcessing);
  g_signals = 2;  // a second one cuts it
  EXPECT_EQ(state.take(), RunState::Take::Count);
}

TEST_F(RunStateTest, HandsControlBackForASignalOrAnEndedSlice) {
  RunState state = state_at(Clock::time_point{});
  state.slice_end = g_now + std::chrono::milliseconds(100);
  state.events = 64;
  EXPECT_TRUE(state.keep_taking());
  g_now = state.slice_end;
  EXPECT_FALSE(state.keep_taking());
  g_now = Clock::time_point{};
  g_signals = 1;
  EXPECT_FALSE(state.keep_taking());
}

}  // namespace
}  // namespace mt
