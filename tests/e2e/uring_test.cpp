// scripts/uring.lua on real workloads: the trace it writes is valid for
// Perfetto, and every request the workload made is one whole flow.
#include <signal.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eUring : public BpfTest {};

TEST_F(E2eUring, EveryRequestOfAKnownMixIsOneWholeFlow) {
  // 40 NOPs (inline), 12 reads of a cached file (inline), 8 buffered writes
  // and 3 fsyncs (io-worker): 63 requests, user_data 1..63.
  Trace t = trace_of(workload("uring_mix") + " 40 12 8 3");
  EXPECT_EQ(t.flow_points(8), 63u);
  EXPECT_EQ(t.flow_points(10), 63u);
  std::vector<uint64_t> submitted, completed;
  for (const auto *r : t.named("submit"))
    submitted.push_back(arg(*r, "user_data"));
  for (const auto *r : t.named("complete"))
    completed.push_back(arg(*r, "user_data"));
  std::sort(submitted.begin(), submitted.end());
  std::sort(completed.begin(), completed.end());
  EXPECT_EQ(submitted, sequence(1, 63));
  EXPECT_EQ(completed, sequence(1, 63));
  // The io-worker path: writes queued to a worker thread of its own.
  EXPECT_FALSE(t.named("queue_async_work").empty());
  bool worker = false;
  for (const auto &name : t.thread_names())
    worker |= name.rfind("iou-wrk-", 0) == 0;
  EXPECT_TRUE(worker);
  // The syscalls as slices: one setup, and enters of at most 16 each.
  auto setup = t.named("io_uring_setup");
  ASSERT_EQ(setup.size(), 1u);
  EXPECT_EQ(arg(*setup[0], "entries"), 64u);
  EXPECT_EQ(t.named("create").size(), 1u);
  uint64_t to_submit = 0;
  for (const auto *r : t.named("io_uring_enter"))
    to_submit += arg(*r, "to_submit");
  EXPECT_EQ(to_submit, 63u);
}

TEST_F(E2eUring, SamplingKeepsAboutThatShareOfRequestsEachWhole) {
  // 4000 requests at 10%: mean 400, sd 19; 6 sd either side.
  Trace t = trace_of(workload("nop_storm") + " 4000 16", {"--sample", "10"});
  size_t begins = t.flow_points(8);
  EXPECT_GE(begins, 286u);
  EXPECT_LE(begins, 514u);
  EXPECT_EQ(t.flow_points(10), begins);
  EXPECT_EQ(t.named("submit").size(), begins);
  EXPECT_EQ(t.named("complete").size(), begins);
}

TEST_F(E2eUring, LostRecordsShowInTheTraceAndBreakNoFlow) {
  // An 8 KiB buffer per CPU cannot keep up with a NOP storm.
  TempDir dir;
  std::string file = dir.file("lost.fxt");
  Command c = mt({"-o", file, "-c", workload("nop_storm") + " 100000 32", "uring"});
  c.env.push_back({"MOONTRACE_BUFFER_KB", "8"});
  auto r = run(c, 60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  unsigned long long events = 0, lost = 0;
  for (const auto &line : lines(r.err))
    std::sscanf(line.c_str(), "moontrace: %llu events, %llu lost", &events, &lost);
  ASSERT_GT(lost, 0u) << r;
  auto problems = mt::testing::perfetto_problems_in_file(file);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  // The counter steps as records are lost and ends at the total.
  uint64_t last = 0;
  size_t steps = 0;
  for (const auto &rec : mt::read_fxt(read_file(file)))
    if (rec.type == 4 && rec.event_type == 1 && rec.name == "lost records") {
      steps++;
      last = arg(rec, "lost");
    }
  EXPECT_GT(steps, 0u);
  EXPECT_EQ(last, lost) << r;
}

TEST_F(E2eUring, RingsThatExistedBeforeTracingOnlyWithAllRings) {
  for (bool all : {false, true}) {
    // The ring is set up at once, used 1.5 s later: after attaching.
    Process storm({{workload("nop_storm"), "500", "8", "0", "1500"}});
    TempDir dir;
    std::string file = dir.file("t.fxt");
    std::vector<std::string> argv = {"-o", file, "-p", std::to_string(storm.pid()), "uring"};
    if (all)
      argv.push_back("--all-rings");
    Process tracer(mt(argv));
    ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
    auto done = storm.wait(10s);
    ASSERT_EQ(done.exit_code, 0) << done;
    tracer.signal(SIGINT);
    auto r = tracer.wait();
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(mt::testing::perfetto_problems_in_file(file).empty());
    Trace t;
    t.records = mt::read_fxt(read_file(file));
    EXPECT_EQ(t.flow_points(8), all ? 500u : 0u) << "--all-rings " << all;
    EXPECT_EQ(t.named("io_uring_enter").size(), all ? 500u / 8 + 1 : 0u) << "--all-rings " << all;
  }
}

TEST_F(E2eUring, StatusLineOnATerminalOnly) {
  TempDir dir;
  std::string trace = dir.file("t.fxt");
  std::string traced = "sh -c '" + workload("nop_storm") + " 20000 8; sleep 1.3'";
  // `script` gives moontrace a terminal; its output is the terminal's.
  std::string command = moontrace() + " -o " + trace + " -c \"" + traced + "\" uring";
  auto r = run({{"script", "-qfec", command, "/dev/null"}}, 30s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "\rmoontrace: 1 s, ")) << r;
  EXPECT_TRUE(contains(r.out, " lost, ")) << r;
  EXPECT_TRUE(contains(r.out, " MB in " + trace)) << r;
  auto piped = run(mt({"-o", trace, "-c", traced, "uring"}), 30s);
  ASSERT_EQ(piped.exit_code, 0) << piped;
  EXPECT_FALSE(contains(piped.err, "\r")) << piped;
}

}  // namespace
}  // namespace e2e
