// Drawings that overlap on a thread: Perfetto drops a slice that starts
// inside another on its track and ends after it, so every such slice must
// reach the trace another way (an async track), and the trace stay valid.
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eOverlaps : public BpfTest {};

// uring_queues 8 4 4 5: 8 reads in flight together (completed by one
// write to their pipe) and 4 + 3 NOPs that complete inline: 15 requests,
// each drawn from its submission to its completion on the completing thread.
TEST_F(E2eOverlaps, RequestsInFlightTogetherAreAllShown) {
  TempDir dir;
  std::string file = dir.file("requests.fxt");
  auto r = run(
      mt({"-o", file, "-c", workload("uring_queues") + " 8 4 4 5", script("request_slices.lua")}),
      60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, ", 0 lost")) << r;
  Trace t = valid_trace(file);
  size_t on_thread = 0, in_lanes = 0, lane_ends = 0;
  for (const auto &e : t.records) {
    if (e.type != 4 || e.name != "request")
      continue;
    on_thread += e.event_type == 4;
    in_lanes += e.event_type == 5;
    lane_ends += e.event_type == 7;
  }
  EXPECT_EQ(t.named("submit").size(), 15u);
  EXPECT_EQ(on_thread + in_lanes, 15u);
  EXPECT_EQ(lane_ends, in_lanes);
  // Reads completed together overlap: some, and only those, are in lanes.
  EXPECT_GT(in_lanes, 0u);
  EXPECT_LT(in_lanes, 8u);
  EXPECT_TRUE(contains(r.err, std::to_string(in_lanes) + " slices would have overlapped")) << r;
}

// One io_uring_enter submitting 256 NOPs draws over 512 hops on its
// thread, more than the sink keeps one by one: the enter's slice still
// holds them all on the thread, and nothing goes to a lane.
TEST_F(E2eOverlaps, AnEnterHoldingHundredsOfHopsStaysOnItsThread) {
  auto [t, r] = run_uring(workload("uring_batches") + " 256 256");
  EXPECT_FALSE(contains(r.err, "would have overlapped")) << r;
  size_t enters = 0;
  for (const auto *e : t.named("io_uring_enter"))
    enters += e->event_type == 4;
  EXPECT_GE(enters, 2u);
  EXPECT_EQ(t.named("submit").size(), 512u);
}

}  // namespace
}  // namespace e2e
