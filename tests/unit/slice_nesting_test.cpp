// Which slices nest on a thread track as Perfetto's importer nests them,
// and the async lanes of those that do not.
#include "trace/slice_nesting.h"

#include <gtest/gtest.h>

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

// A latency slice starts at its start probe's time, where that probe may
// have drawn a hop: Perfetto puts the hop first (it was written first) and
// drops the longer slice that starts with it.
TEST(ThreadNesting, ASliceStartingWithAHopAndEndingAfterItDoesNotFit) {
  ThreadNesting n;
  EXPECT_TRUE(n.fits(1, 10, 11));
  EXPECT_FALSE(n.fits(1, 10, 50));
  EXPECT_TRUE(n.fits(1, 10, 11));   // the same span again nests in it
  EXPECT_FALSE(n.fits(1, 10, 11));  // not twice: ties inside it are not known
}

TEST(ThreadNesting, ASliceStartingBeforeWhatIsRememberedDoesNotFit) {
  ThreadNesting n;
  for (uint64_t i = 0; i <= ThreadNesting::kMaxRoots; i++)
    ASSERT_TRUE(n.fits(1, 100 + 10 * i, 101 + 10 * i));
  EXPECT_FALSE(n.fits(1, 50, 100000));  // it might overlap a forgotten one
  EXPECT_TRUE(n.fits(1, 95 + 10 * (ThreadNesting::kMaxRoots - 1), 100000));
}

TEST(AsyncLanes, ASliceTakesTheFirstLaneFreeAtItsStart) {
  AsyncLanes lanes;
  EXPECT_EQ(lanes.lane(1, 7, 0, 10), 0u);
  EXPECT_EQ(lanes.lane(1, 7, 5, 15), 1u);
  EXPECT_EQ(lanes.lane(1, 7, 6, 12), 2u);
  EXPECT_EQ(lanes.lane(1, 7, 10, 20), 0u);
  EXPECT_EQ(lanes.lane(1, 7, 16, 30), 1u);
  EXPECT_EQ(lanes.lane(1, 8, 5, 15), 0u);  // another name
  EXPECT_EQ(lanes.lane(2, 7, 5, 15), 0u);  // another process
}

}  // namespace
}  // namespace mt
