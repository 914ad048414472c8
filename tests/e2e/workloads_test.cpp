// The workloads and the loop device that other end-to-end tests count on:
// they must run cleanly and do exactly what their counts promise.
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/loop_device.h"

namespace e2e {
namespace {

TEST(Workloads, UringMixRunsCleanly) {
  auto r = run({{workload("uring_mix"), "10", "5", "5", "2"}});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "") << r;
  EXPECT_EQ(r.err, "") << r;
}

TEST(Workloads, UringBatchesRunsCleanly) {
  auto r = run({{workload("uring_batches"), "1", "2", "3"}});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "") << r;
}

TEST(Workloads, UringBatchesRejectsSizesOutOfRange) {
  EXPECT_EQ(run({{workload("uring_batches"), "0"}}).exit_code, 2);
  EXPECT_EQ(run({{workload("uring_batches"), "257"}}).exit_code, 2);
}

// Attaching a loop device needs root: fail, not skip, under CI=true.
class WorkloadsBlock : public BpfTest {};

TEST_F(WorkloadsBlock, EachDirectWriteIsOneWriteRequest) {
  LoopDevice loop;
  EXPECT_EQ(loop.path(), "/dev/" + loop.name());
  EXPECT_EQ(loop.dev() >> 20, 7u) << "loop devices have major 7";
  EXPECT_EQ(read_file("/sys/block/" + loop.name() + "/queue/nomerges"), "2\n");

  uint64_t before = loop.writes_completed();
  auto r = run(direct_writes(loop.path(), 8, 4096));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(loop.writes_completed() - before, 8u);
}

// 64 KiB (16 pages) is far below the loop queue limits (128 segments,
// 1280 KiB), so it is not split either; 1 MiB writes would be.
TEST_F(WorkloadsBlock, DirectIoLoopCounts64KiBWritesOnce) {
  LoopDevice loop(16ull << 20, /*direct_io=*/true);
  EXPECT_TRUE(loop.direct_io());
  uint64_t before = loop.writes_completed();
  auto r = run(direct_writes(loop.path(), 8, 64 * 1024));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(loop.writes_completed() - before, 8u);
}

}  // namespace
}  // namespace e2e
