// Where each record goes, with plain functions for the trace, the
// handlers and the output, on a clock and signal count the test sets.
#include "app/record_router.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "run/record_decoder.h"
#include "script/lua_interrupt.h"

namespace mt {
namespace {

using Clock = RunState::Clock;
Clock::time_point g_now;
int g_signals = 0;

constexpr uint32_t kThreadNameSlot = 3;

struct Routed {
  std::vector<std::string> to;  // "named", "arrived 0", "handle 1", "print 2"
};

class RecordRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_now = Clock::time_point{};
    g_signals = 0;
    state.now = [] { return g_now; };
    state.signals = [] { return g_signals; };
  }
  void TearDown() override { set_lua_limits(0, Clock::time_point::max()); }

  // Probes 0 drawn, 1 handled, 2 neither, 3 is the thread-name slot, 4 has no layout.
  RecordRouter router(bool with_trace = true) {
    std::vector<RecordRouter::Probe> probes = {
        {&layout, true, false}, {&layout, false, true}, {&layout, false, false}};
    RecordRouter::Destinations to;
    if (with_trace) {
      to.thread_named = [this](auto, uint32_t) { routed.to.push_back("named"); };
      to.arrived = [this](uint32_t id, auto, uint32_t) -> uint64_t {
        routed.to.push_back("arrived " + std::to_string(id));
        return 42;
      };
    }
    to.handle = [this](uint32_t id, auto, uint32_t) {
      routed.to.push_back("handle " + std::to_string(id));
      if (handler_throws)
        throw Error("handler failed");
      if (handler_interrupted)
        throw LuaInterrupted{"x.lua:1:"};
    };
    to.print = [this](uint32_t id, auto, uint32_t) {
      routed.to.push_back("print " + std::to_string(id));
    };
    return RecordRouter(probes, kThreadNameSlot, to, state);
  }

  bool take(RecordRouter &r, uint32_t id, uint64_t *draw_at = nullptr) {
    unsigned char record[16] = {};
    std::memcpy(record, &id, 4);
    uint64_t at = 0;
    bool more = r.take(record, sizeof record, at);
    if (draw_at)
      *draw_at = at;
    return more;
  }

  RecordLayout layout;
  RunState state;
  Routed routed;
  bool handler_throws = false, handler_interrupted = false;
};

TEST_F(RecordRouterTest, EachProbeGoesWhereItIsPlanned) {
  RecordRouter r = router();
  uint64_t draw_at = 0;
  EXPECT_TRUE(take(r, 0, &draw_at));
  EXPECT_EQ(draw_at, 42u);
  EXPECT_TRUE(take(r, 1));
  EXPECT_TRUE(take(r, 2));
  EXPECT_TRUE(take(r, kThreadNameSlot));
  EXPECT_EQ(routed.to, (std::vector<std::string>{"arrived 0", "handle 1", "print 2", "named"}));
  EXPECT_EQ(state.events, 3u);  // thread names are not events
}

TEST_F(RecordRouterTest, ShortRecordsAndUnknownProbesAreIgnored) {
  RecordRouter r = router();
  unsigned char shorter[3] = {};
  uint64_t at = 0;
  EXPECT_TRUE(r.take(shorter, sizeof shorter, at));
  EXPECT_TRUE(take(r, 7));
  EXPECT_TRUE(routed.to.empty());
  EXPECT_EQ(state.events, 0u);
}

TEST_F(RecordRouterTest, WithoutATraceTheThreadNameSlotIsNotAProbe) {
  RecordRouter r = router(false);
  EXPECT_TRUE(take(r, kThreadNameSlot));
  EXPECT_TRUE(routed.to.empty());
}

TEST_F(RecordRouterTest, AHandlerErrorIsKeptAndItsHandlersRunNoMore) {
  RecordRouter r = router();
  handler_throws = true;
  EXPECT_FALSE(take(r, 1));  // back to the loop, which sees the failure
  ASSERT_TRUE(state.failure);
  EXPECT_STREQ(state.failure->what(), "handler failed");
  EXPECT_FALSE(take(r, 1));
  EXPECT_TRUE(take(r, 2));  // printing goes on until the loop stops
  EXPECT_EQ(routed.to, (std::vector<std::string>{"handle 1", "print 2"}));
}

TEST_F(RecordRouterTest, AnInterruptedHandlerCountsAsUnprocessed) {
  RecordRouter r = router();
  handler_interrupted = true;
  EXPECT_FALSE(take(r, 1));
  EXPECT_EQ(state.unprocessed, 1u);
  EXPECT_FALSE(state.failure);
}

TEST_F(RecordRouterTest, AStopSignalHandsControlBackToTheLoop) {
  RecordRouter r = router();
  g_signals = 1;
  EXPECT_FALSE(take(r, 2));
  EXPECT_EQ(routed.to, (std::vector<std::string>{"print 2"}));
}

TEST_F(RecordRouterTest, LateInAStopRecordsAreOnlyCounted) {
  RecordRouter r = router();
  state.begin_stop(true);
  EXPECT_TRUE(take(r, 2));
  g_now += kStopProcessing;
  EXPECT_TRUE(take(r, 2));  // counted, and the drain goes on
  g_now += kStopCounting;
  EXPECT_FALSE(take(r, 2));  // counted, and the drain halts
  EXPECT_EQ(routed.to, (std::vector<std::string>{"print 2"}));
  EXPECT_EQ(state.events, 3u);
  EXPECT_EQ(state.unprocessed, 2u);
}

}  // namespace
}  // namespace mt
