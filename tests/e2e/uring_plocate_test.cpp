// scripts/uring.lua on a real program nobody here wrote: Debian's plocate,
// which reads its database's posting lists with io_uring (liburing) in its
// default configuration, many reads per io_uring_enter. Every request it
// makes is one whole flow, every enter is on the ring's track, and the
// summary counts what the trace shows.
#include <filesystem>
#include <fstream>

#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eUringPlocate : public BpfTest {};

// A tree of kDirs directories of kFiles empty files each, named
// file_DIR_FILE.txt, indexed by updatedb into `db`.
constexpr int kDirs = 20, kFiles = 50;
void index_tree(const TempDir &dir, const std::string &db) {
  std::string tree = dir.file("tree");
  for (int d = 1; d <= kDirs; d++) {
    std::string sub = tree + "/d" + std::to_string(d);
    std::filesystem::create_directories(sub);
    for (int f = 1; f <= kFiles; f++)
      std::ofstream(sub + "/file_" + std::to_string(d) + "_" + std::to_string(f) + ".txt");
  }
  auto r = run(
      Command{{"updatedb", "--output", db, "--database-root", tree, "--require-visibility", "0"}});
  ASSERT_EQ(r.exit_code, 0) << r;
}

TEST_F(E2eUringPlocate, EachReadOfTheDatabaseIsOneWholeFlowInAnEnterOnTheRingsTrack) {
  TempDir dir;
  std::string db = dir.file("files.db");
  index_tree(dir, db);
  // file_1 names directory 1's files and those of directories 10-19.
  auto [t, r] = run_uring("plocate --database " + db + " --count file_1");
  EXPECT_TRUE(contains(r.out, std::to_string(kFiles * 11))) << r;

  uint64_t requests = summary_count(r.err, "requests completed");
  uint64_t enters = summary_count(r.err, "io_uring_enter calls");
  EXPECT_GT(requests, enters) << "plocate submits its reads in batches: " << r;
  EXPECT_GT(enters, 0u) << r;
  EXPECT_EQ(t.named("submit").size(), requests);
  EXPECT_EQ(t.named("complete").size(), requests);
  EXPECT_EQ(t.named("io_uring_enter").size(), enters);
  for (const auto *s : t.named("submit")) {
    std::string op = text_arg(*s, "op");
    EXPECT_TRUE(op == "READ" || op == "READV") << op;
  }
  EXPECT_EQ(t.flow_points(8), requests);
  EXPECT_EQ(t.flow_points(10), requests);
  EXPECT_EQ(ended_requests(t).size(), requests);

  // One ring, whose track holds the queue counters of every enter.
  auto creates = t.named("create");
  ASSERT_EQ(creates.size(), 1u);
  char ring[32];
  std::snprintf(ring, sizeof(ring), "ring 0x%llx", (unsigned long long)arg(*creates[0], "ring"));
  expect_queues_at_each_enter_and_none_left(t, ring, enters);
  for (const auto *e : t.named("io_uring_enter"))
    EXPECT_EQ(arg(*e, "fd"), arg(*creates[0], "fd"));
}

}  // namespace
}  // namespace e2e
