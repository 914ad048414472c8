// Which slices nest on a thread track as Perfetto's importer nests them,
// and the async lanes of those that do not.
#include "trace/slice_nesting.h"

#include <gtest/gtest.h>

#include <set>

namespace mt {
namespace {

TEST(ThreadNesting, NestedAndLaterSlicesFit) {
  ThreadNesting n;
  EXPECT_TRUE(n.fits(1, 10, 11));  // a 1-ns hop
  EXPECT_TRUE(n.fits(1, 20, 21));
  EXPECT_TRUE(n.fits(1, 5, 30));   // holds both
  EXPECT_TRUE(n.fits(1, 30, 40));  // starts as the last ends
  EXPECT_TRUE(n.fits(1, 2, 40));   // holds everything
}

TEST(ThreadNesting, ASliceStartingInsideAnotherAndEndingAfterItDoesNotFit) {
  ThreadNesting n;
  EXPECT_TRUE(n.fits(1, 10, 20));
  EXPECT_FALSE(n.fits(1, 15, 25));
  EXPECT_TRUE(n.fits(1, 20, 30));  // what did not fit was not taken
  EXPECT_TRUE(n.fits(2, 15, 25));  // another thread
}

// A slice that starts with a 1-ns one drawn before it and ends after it:
// Perfetto puts the 1-ns slice first (written first) and drops the longer.
TEST(ThreadNesting, ASliceStartingWithAShorterOneAndEndingAfterItDoesNotFit) {
  ThreadNesting n;
  EXPECT_TRUE(n.fits(1, 10, 11));
  EXPECT_FALSE(n.fits(1, 10, 50));
}

// Inside a slice that holds nothing it nests; inside one that holds
// others it might cross one of them, except a 1-ns slice, which crosses
// nothing.
TEST(ThreadNesting, ASliceInsideAnotherNestsUnlessItMightCrossOneItHolds) {
  ThreadNesting n;
  EXPECT_TRUE(n.fits(1, 10, 50));
  EXPECT_TRUE(n.fits(1, 20, 50));   // two drawings of one record: inside
  EXPECT_FALSE(n.fits(1, 15, 40));  // the first now holds one
  EXPECT_TRUE(n.fits(1, 15, 16));
  EXPECT_TRUE(n.fits(1, 10, 11));  // starts with it, 1 ns
}

// A thread that draws more than kMaxRoots slices in a row (an enter that
// submits hundreds of requests, each a hop): the one holding them all fits.
TEST(ThreadNesting, ASliceHoldingMoreThanTheRootsKeptFits) {
  ThreadNesting n;
  for (uint64_t i = 0; i < 3 * ThreadNesting::kMaxRoots; i++)
    ASSERT_TRUE(n.fits(1, 100 + 10 * i, 101 + 10 * i));
  EXPECT_FALSE(n.fits(1, 105, 100000));  // starts among the forgotten ones
  EXPECT_TRUE(n.fits(1, 50, 100000));    // holds them all
}

// Enters one after another, each holding more hops than the roots kept:
// each starts in the gap before its first hop, which stays a gap.
TEST(ThreadNesting, EachOfManyEntersHoldingMoreThanTheRootsKeptFits) {
  ThreadNesting n;
  uint64_t at = 1000;
  for (int enter = 0; enter < 10; enter++) {
    uint64_t start = at, hops = ThreadNesting::kMaxRoots + 500 * enter;
    for (uint64_t i = 0; i < hops; i++)
      ASSERT_TRUE(n.fits(1, start + 800 + 150 * i, start + 900 + 150 * i));
    uint64_t end = start + 1000 + 150 * hops;
    EXPECT_TRUE(n.fits(1, start, end)) << "enter " << enter;
    EXPECT_FALSE(n.fits(1, start + 850, end + 10)) << "starts inside a hop it does not hold";
    at = end + 3000;
  }
}

TEST(ThreadNesting, AfterThreadsAreForgottenOnlyLaterSlicesFit) {
  ThreadNesting n;
  EXPECT_TRUE(n.fits(0, 10, 1000));
  for (uint64_t t = 1; t <= ThreadNesting::kMaxThreads; t++)
    ASSERT_TRUE(n.fits(t, 2000 + t, 2001 + t));
  EXPECT_FALSE(n.fits(0, 500, 2000000));  // might cross [10, 1000]
  EXPECT_TRUE(n.fits(0, 500, 501));
  EXPECT_TRUE(n.fits(0, 3000000, 3000010));
}

// Each lane has an id of its own in the whole trace: Perfetto keys async
// tracks by id alone.
TEST(AsyncLanes, ASliceTakesTheFirstLaneFreeAtItsStart) {
  AsyncLanes lanes;
  uint64_t a = lanes.lane(1, 7, 0, 10);
  uint64_t b = lanes.lane(1, 7, 5, 15);
  uint64_t c = lanes.lane(1, 7, 6, 12);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_NE(a, c);
  EXPECT_EQ(lanes.lane(1, 7, 10, 20), a);
  EXPECT_EQ(lanes.lane(1, 7, 16, 30), b);
  std::set<uint64_t> others = {lanes.lane(1, 8, 5, 15), lanes.lane(2, 7, 5, 15)};
  EXPECT_EQ(others.size(), 2u);  // another name, another track: lanes of their own
  for (uint64_t id : {a, b, c})
    EXPECT_FALSE(others.count(id));
}

}  // namespace
}  // namespace mt
