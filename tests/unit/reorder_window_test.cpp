// The reorder window as a stage: records of several sources (CPUs), each
// nearly in time order, in; the same records, in time order, out.
#include "run/reorder_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mt {
namespace {

// A record's bytes: its number, so that what comes out can be told apart.
struct Rec {
  uint64_t ts;
  uint32_t n;
  unsigned char bytes[4];
};

class ReorderWindowTest : public ::testing::Test {
 protected:
  // Holds records[i] of `source` at ring position i (records stay put).
  bool hold(ReorderWindow &w, size_t source, Rec &r, uint64_t pos) {
    std::memcpy(r.bytes, &r.n, 4);
    return w.hold(source, r.ts, r.bytes, 4, pos);
  }
  std::vector<uint32_t> release(ReorderWindow &w, uint64_t watermark) {
    std::vector<uint32_t> out;
    w.release(watermark, [&](const unsigned char *data, uint32_t size) {
      EXPECT_EQ(size, 4u);
      uint32_t n;
      std::memcpy(&n, data, 4);
      out.push_back(n);
    });
    return out;
  }
};

TEST_F(ReorderWindowTest, MergesSourcesInTimeOrderEqualTimesInTheOrderHeld) {
  ReorderWindow w(2);
  std::vector<Rec> cpu0 = {{50, 0, {}}, {200, 20, {}}, {300, 3, {}}};
  std::vector<Rec> cpu1 = {{100, 1, {}}, {200, 21, {}}, {250, 25, {}}};
  for (size_t i = 0; i < 3; i++) {
    EXPECT_TRUE(hold(w, 0, cpu0[i], i));
    EXPECT_TRUE(hold(w, 1, cpu1[i], i));
  }
  EXPECT_EQ(w.held(), 6u);
  EXPECT_EQ(release(w, UINT64_MAX), (std::vector<uint32_t>{0, 1, 20, 21, 25, 3}));
  EXPECT_EQ(w.held(), 0u);
}

TEST_F(ReorderWindowTest, HoldsBackWhatIsNotOlderThanTheWatermark) {
  ReorderWindow w(2);
  std::vector<Rec> recs = {{100, 1, {}}, {200, 2, {}}, {300, 3, {}}};
  hold(w, 0, recs[0], 0);
  hold(w, 0, recs[2], 1);
  hold(w, 1, recs[1], 0);
  EXPECT_EQ(release(w, 200), (std::vector<uint32_t>{1}));
  EXPECT_EQ(release(w, 200), (std::vector<uint32_t>{}));
  // The ring of source 0 may be reused up to its oldest record still held.
  EXPECT_EQ(w.oldest_position(0), 1u);
  EXPECT_EQ(w.oldest_position(1), 0u);
  Rec later{250, 4, {}};
  hold(w, 1, later, 1);
  EXPECT_EQ(release(w, 260), (std::vector<uint32_t>{2, 4}));
  EXPECT_FALSE(w.oldest_position(1));
  EXPECT_EQ(release(w, UINT64_MAX), (std::vector<uint32_t>{3}));
}

// A program nested in an interrupt on the same CPU writes its record
// before the one it interrupted, which is older: that one is set aside.
TEST_F(ReorderWindowTest, ARecordOlderThanItsSourcesLastIsSetAsideAndDrawnInItsPlace) {
  ReorderWindow w(1);
  std::vector<Rec> recs = {{100, 1, {}}, {300, 3, {}}, {200, 2, {}}, {400, 4, {}}};
  for (size_t i = 0; i < recs.size(); i++)
    EXPECT_TRUE(hold(w, 0, recs[i], i));
  // Set aside, it was copied: its bytes in the ring may change.
  recs[2].bytes[0] = 99;
  EXPECT_EQ(release(w, UINT64_MAX), (std::vector<uint32_t>{1, 2, 3, 4}));
}

TEST_F(ReorderWindowTest, ARecordOlderThanOneReleasedIsGivenUp) {
  ReorderWindow w(2);
  Rec a{100, 1, {}}, b{300, 3, {}}, late{200, 2, {}};
  hold(w, 0, a, 0);
  hold(w, 0, b, 1);
  EXPECT_EQ(release(w, UINT64_MAX), (std::vector<uint32_t>{1, 3}));
  EXPECT_FALSE(hold(w, 1, late, 0));
  EXPECT_EQ(w.held(), 0u);
}

TEST_F(ReorderWindowTest, RoomAsideIsBounded) {
  ReorderWindow w(1, 8);  // room for two records aside
  std::vector<Rec> recs = {{500, 5, {}}, {100, 1, {}}, {200, 2, {}}, {300, 3, {}}};
  EXPECT_TRUE(hold(w, 0, recs[0], 0));
  EXPECT_TRUE(hold(w, 0, recs[1], 1));
  EXPECT_TRUE(hold(w, 0, recs[2], 2));
  EXPECT_FALSE(hold(w, 0, recs[3], 3));
  EXPECT_EQ(release(w, UINT64_MAX), (std::vector<uint32_t>{1, 2, 5}));
}

// Many records across many releases, two sources meeting in time, the
// queues growing past their first size: each comes out once, in order.
TEST_F(ReorderWindowTest, ManyRecordsAcrossManyReleasesComeOutOnceInOrder) {
  ReorderWindow w(2);
  std::vector<Rec> recs;
  recs.reserve(40000);
  std::vector<std::pair<uint64_t, uint32_t>> held;
  std::vector<uint32_t> out;
  uint32_t n = 0;
  uint64_t pos[2] = {0, 0};
  for (uint64_t step = 0; step < 400; step++) {
    for (uint64_t k = 0; k < 50; k++) {
      uint64_t ts = step * 100 + k * 2;
      uint64_t behind = ts > 3000 ? ts - 3000 : 0;
      for (auto [source, t] : {std::pair<size_t, uint64_t>{0, ts}, {1, behind}}) {
        recs.push_back({t, n++, {}});
        ASSERT_TRUE(hold(w, source, recs.back(), pos[source]++));
        held.emplace_back(t, recs.back().n);
      }
    }
    auto got = release(w, step * 100 > 3000 ? step * 100 - 3000 : 0);
    out.insert(out.end(), got.begin(), got.end());
  }
  auto got = release(w, UINT64_MAX);
  out.insert(out.end(), got.begin(), got.end());
  std::stable_sort(held.begin(), held.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  ASSERT_EQ(out.size(), held.size());
  size_t wrong = 0;
  for (size_t i = 0; i < out.size(); i++)
    wrong += recs[out[i]].ts != held[i].first;
  EXPECT_EQ(wrong, 0u);
}

}  // namespace
}  // namespace mt
