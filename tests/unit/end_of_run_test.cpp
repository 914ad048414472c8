// The reports of maps that overflowed, from plain counts.
#include "app/end_of_run.h"

#include <gtest/gtest.h>

namespace mt {
namespace {

Declaration with_maps() {
  Declaration decl;
  AggregationDecl a;
  a.name = "reads";
  a.size = 16;
  decl.aggregations.push_back(a);
  LatencyDecl l;
  l.name = "io";
  l.size = 32;
  decl.latencies.push_back(l);
  return decl;
}

TEST(EndOfRun, NothingToSayWhenNothingOverflowed) {
  MapOverflows none{{0}, {LatencyCounts{5, 0, 5, 0, 0}}};
  EXPECT_EQ(overflow_text(with_maps(), none, false), "");
}

TEST(EndOfRun, AFullAggregationAndEvictedStartsAreTold) {
  MapOverflows some{{3}, {LatencyCounts{10, 0, 6, 0, 1}}};
  EXPECT_EQ(overflow_text(with_maps(), some, false),
            "moontrace: count 'reads' was full (16 keys): 3 updates dropped; raise size=\n"
            "moontrace: latency 'io': 3 starts evicted before their stop (size=32)\n");
}

TEST(EndOfRun, FlowsNoLongerFollowedOutsideTheTracedProcessesAreTold) {
  MapOverflows some{{0}, {LatencyCounts{5, 0, 5, 0, 0}}, 2};
  EXPECT_EQ(overflow_text(with_maps(), some, false),
            "moontrace: 2 flows begun in the traced processes found their place in the table of "
            "flows to follow elsewhere taken by another: their later points outside those "
            "processes, if any, were not drawn\n");
}

TEST(EndOfRun, VerboseTellsEveryLatencysCounts) {
  MapOverflows none{{0}, {LatencyCounts{5, 1, 4, 2, 1}}};
  EXPECT_EQ(overflow_text(with_maps(), none, true),
            "moontrace: latency 'io': 5 starts, 1 restarts, 4 matched, 2 unmatched stops, 1 "
            "pending, 0 evicted, 0 dropped\n");
}

// Starts the kernel refused to keep are neither pending nor evicted.
TEST(EndOfRun, DroppedStartsAreTold) {
  MapOverflows some{{0}, {LatencyCounts{10, 0, 6, 0, 1, 3}}};
  EXPECT_EQ(overflow_text(with_maps(), some, false),
            "moontrace: latency 'io': 3 starts the kernel could not keep (out of memory, or its "
            "storage busy in an interrupted program): their stops were not timed\n");
  EXPECT_EQ(some.latencies[0].evicted(), 0u);
}

}  // namespace
}  // namespace mt
