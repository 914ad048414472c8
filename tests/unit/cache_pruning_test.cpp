// The cache keeps within its budget, removing what was used least recently
// (compiler/cache_pruning.h).
#include "compiler/cache_pruning.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "compiler/object_cache.h"
#include "tests/unit/scratch_dir.h"

namespace mt {
namespace {

class CachePruning : public ::testing::Test {
 protected:
  // NAME with BYTES bytes, last used SECONDS_AGO.
  void put(const std::string &name, size_t bytes, time_t seconds_ago) {
    dir_.write(name, std::string(bytes, 'x'));
    age(name, seconds_ago);
  }
  void age(const std::string &name, time_t seconds_ago) {
    struct timespec times[2] = {{time(nullptr) - seconds_ago, 0}, {time(nullptr) - seconds_ago, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, dir_.file(name).c_str(), times, 0), 0);
  }
  bool has(const std::string &name) { return std::filesystem::exists(dir_.file(name)); }
  void prune(uint64_t budget, const std::string &keep = "") {
    UniqueFd fd(open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    prune_cache(fd.get(), budget, keep);
  }
  ScratchDir dir_;
};

TEST_F(CachePruning, WithinTheBudgetNothingGoes) {
  put("aa.o", 100, 1000);
  put("bb.front", 100, 2000);
  prune(200);
  EXPECT_TRUE(has("aa.o"));
  EXPECT_TRUE(has("bb.front"));
}

TEST_F(CachePruning, OverItTheLeastRecentlyUsedGoDownToThreeQuarters) {
  put("a1.o", 100, 4000);
  put("a2.front", 100, 3000);
  put("a3.o", 100, 2000);
  put("a4.o", 100, 1000);
  prune(300);  // 400 bytes: down to 225
  EXPECT_FALSE(has("a1.o"));
  EXPECT_FALSE(has("a2.front"));
  EXPECT_TRUE(has("a3.o"));
  EXPECT_TRUE(has("a4.o"));
}

// Runs pruning at once count what another removed as gone: together they
// remove no more than one would.
TEST_F(CachePruning, RunsPruningAtOnceRemoveNoMoreThanOne) {
  for (int round = 0; round < 10; round++) {
    for (int i = 0; i < 64; i++)
      put("e" + std::to_string(i) + ".o", 100, 10000 - i * 100);
    std::vector<std::thread> runs;
    for (int r = 0; r < 4; r++)
      runs.emplace_back([&] { prune(4000); });  // 6,400 bytes: down to 3,000
    for (auto &t : runs)
      t.join();
    int left = 0;
    for (int i = 0; i < 64; i++)
      left += has("e" + std::to_string(i) + ".o");
    ASSERT_EQ(left, 30) << "round " << round;
  }
}

TEST_F(CachePruning, TheEntryJustStoredAndOtherFilesStay) {
  put("c1.o", 100, 4000);  // the oldest, but just stored
  put("notes.txt", 1000, 9000);
  put("C2.o", 1000, 9000);  // not a key of ours (upper case)
  put("c3.o", 100, 1000);
  std::filesystem::create_symlink(dir_.file("c3.o"), dir_.file("c4.o"));
  prune(100, "c1.o");
  EXPECT_TRUE(has("c1.o"));
  EXPECT_TRUE(has("notes.txt"));
  EXPECT_TRUE(has("C2.o"));
  EXPECT_FALSE(has("c3.o"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir_.file("c4.o")));
}

TEST_F(CachePruning, TemporaryFilesLeftBehindGoAfterAnHour) {
  put("d1.tmp.123", 10, 7200);
  put("d2.tmp.456", 10, 60);  // a store under way
  prune(1 << 20);
  EXPECT_FALSE(has("d1.tmp.123"));
  EXPECT_TRUE(has("d2.tmp.456"));
}

// A load marks its entry used, so a store keeps it over older ones.
TEST_F(CachePruning, TheObjectCacheKeepsWhatItLoads) {
  ScratchDir home;
  std::string dir = home.file("cache");
  const std::vector<char> object(2000, 'o');  // about 2,100 bytes stored
  ObjectCache cache(dir, ".o", 6000);
  std::string first(32, 'a'), second(32, 'b'), third(32, 'c');
  cache.store(first, object);
  cache.store(second, object);
  for (const auto &[key, age] : {std::pair{first, 200}, std::pair{second, 100}}) {
    struct timespec old[2] = {{time(nullptr) - age, 0}, {time(nullptr) - age, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, (dir + "/" + key + ".o").c_str(), old, 0), 0);
  }
  // The oldest, until loaded.
  ASSERT_TRUE(cache.load(first));
  cache.store(third, object);  // over 6,000 bytes: the second goes
  EXPECT_TRUE(cache.load(first));
  EXPECT_FALSE(cache.load(second));
  EXPECT_TRUE(cache.load(third));
}

}  // namespace
}  // namespace mt
