// scripts/uring.lua on another real program nobody here wrote: Debian's
// qemu-img, whose `bench` drives QEMU's io_uring block backend (liburing)
// in its default configuration: three rings per process, one request per
// enter, completions reaped in user space, direct writes that go to
// io-workers and flushes between them. Every request is one whole flow,
// every enter is on its ring's track, and the summary counts what the
// trace shows.
#include <map>
#include <regex>

#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eUringQemuImg : public BpfTest {};

// `qemu-img bench ARGS` on a new 64-MiB raw image, traced by uring.lua.
std::pair<Trace, Result> bench_traced(const std::string &args) {
  TempDir dir;
  std::string image = dir.file("disk.img");
  auto made = run(Command{{"qemu-img", "create", "-q", "-f", "raw", image, "64M"}});
  EXPECT_EQ(made.exit_code, 0) << made;
  return run_uring("qemu-img bench -q -i io_uring -f raw " + args + " " + image);
}

// The summary's table: requests by opcode, whatever their path.
std::map<std::string, uint64_t> requests_by_opcode(const std::string &err) {
  std::map<std::string, uint64_t> out;
  static const std::regex row(R"(^([A-Z_0-9]+) +([a-z-]+) +(\d+) )");
  std::smatch m;
  for (const auto &l : lines(err))
    if (std::regex_search(l, m, row) && m[1] != "OPCODE")
      out[m[1]] += std::stoull(m[3]);
  return out;
}

// What must hold of every qemu-img trace: each request submitted is one
// whole flow; the summary's counts are the trace's, by opcode too; each
// enter names the fd of a ring created under trace, and that ring's track
// has the queue counters of each of its enters. The trace's submits by
// opcode.
std::map<std::string, uint64_t> check_requests_and_enters(const Trace &t, const Result &r) {
  uint64_t requests = summary_count(r.err, "requests completed");
  uint64_t enters = summary_count(r.err, "io_uring_enter calls");
  EXPECT_GT(requests, 0u) << r;
  EXPECT_EQ(t.named("submit").size(), requests);
  EXPECT_EQ(t.named("complete").size(), requests);
  EXPECT_EQ(t.flow_points(8), requests);
  EXPECT_EQ(t.flow_points(10), requests);
  EXPECT_EQ(ended_requests(t).size(), requests);
  std::map<std::string, uint64_t> submitted;
  for (const auto *s : t.named("submit"))
    submitted[text_arg(*s, "op")]++;
  EXPECT_EQ(requests_by_opcode(r.err), submitted) << r;

  std::map<uint64_t, std::string> ring_of_fd;  // one process: fds are its own
  for (const auto *c : t.named("create")) {
    char ring[32];
    std::snprintf(ring, sizeof(ring), "ring 0x%llx", (unsigned long long)arg(*c, "ring"));
    ring_of_fd[arg(*c, "fd")] = ring;
  }
  EXPECT_GE(ring_of_fd.size(), 1u);
  EXPECT_EQ(t.named("io_uring_enter").size(), enters);
  std::map<std::string, size_t> enters_of;
  for (const auto *e : t.named("io_uring_enter")) {
    auto ring = ring_of_fd.find(arg(*e, "fd"));
    EXPECT_NE(ring, ring_of_fd.end()) << "an enter on fd " << arg(*e, "fd");
    if (ring != ring_of_fd.end())
      enters_of[ring->second]++;
  }
  for (const auto &[ring, n] : enters_of)
    expect_queues_at_each_enter_and_none_left(t, ring, n);
  return submitted;
}

TEST_F(E2eUringQemuImg, CachedReadsAreEachOneWholeFlowOnTheirRingsTrack) {
  auto [t, r] = bench_traced("-c 20000 -d 32");
  auto submitted = check_requests_and_enters(t, r);
  EXPECT_EQ(submitted["READV"], 20000u) << r;
  EXPECT_EQ(t.named("queue_async_work").size(), 0u) << "reads of cached pages complete inline";
}

TEST_F(E2eUringQemuImg, DirectWritesAndFlushesOnIoWorkersAreEachOneWholeFlow) {
  auto [t, r] = bench_traced("-c 5000 -d 200 -t none -w --flush-interval=500");
  auto submitted = check_requests_and_enters(t, r);
  EXPECT_EQ(submitted["WRITEV"], 5000u) << r;
  EXPECT_GE(submitted["FSYNC"], 1u) << r;
  // Each request sent to an io-worker has a hop there, and the finding
  // counts them all.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.err, m, std::regex(R"((\d+) of (\d+) requests \(\d+%\) ran on io-workers)")))
      << r;
  EXPECT_EQ(std::stoull(m[1]), t.named("queue_async_work").size());
  EXPECT_EQ(std::stoull(m[2]), t.named("submit").size());
  // Its io-workers exit with it: the process's io-workers counter ends at
  // 0 (a worker's last switch, after its exit, does not count it again).
  const mt::FxtRecord *last = nullptr;
  for (const auto &rec : t.records)
    if (rec.type == 4 && rec.event_type == 1 && rec.name == "io-workers" &&
        (!last || rec.ts >= last->ts))
      last = &rec;
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(arg(*last, "io_workers"), 0u);
  bool worker_named = false;
  for (const auto &[tid, name] : t.thread_names_by_tid())
    worker_named |= name.starts_with("iou-wrk-");
  EXPECT_TRUE(worker_named);
}

}  // namespace
}  // namespace e2e
