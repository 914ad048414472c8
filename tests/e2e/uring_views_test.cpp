// uring.lua's views beyond request flows, on workloads that set the values:
// each ring's track with its queue counters and reaping marks
// (tests/workloads/uring_queues.c documents every value), and the summary
// at exit, as text and as JSON.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "tests/e2e/json_lines.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eUringViews : public BpfTest {};

// uring_queues DEPTH NOPS REAP WAIT_MS [registered]
constexpr int kDepth = 8, kNops = 5, kReap = 3, kWaitMs = 20;
std::string queues_command(const char *registered = "") {
  return workload("uring_queues") + " " + std::to_string(kDepth) + " " + std::to_string(kNops) +
         " " + std::to_string(kReap) + " " + std::to_string(kWaitMs) + registered;
}

constexpr uint64_t kRegisteredRing = 16;  // IORING_ENTER_REGISTERED_RING

// The ring's track in the trace of uring_queues COMMAND, its counters at
// the entry and exit of each of the 5 enters and its reaping marks, each
// enter's IORING_ENTER_REGISTERED_RING flag being ENTER_FLAGS.
void expect_queues_at_every_enter(const std::string &command, uint64_t enter_flags) {
  Trace t = trace_of(command);
  auto creates = t.named("create");
  ASSERT_EQ(creates.size(), 1u);
  char ring[32];
  std::snprintf(ring, sizeof(ring), "ring 0x%llx", (unsigned long long)arg(*creates[0], "ring"));
  uint64_t pid = creates[0]->pid;

  // The ring's track: a thread of the workload's process, named after it.
  std::optional<uint64_t> track;
  for (const auto &r : t.records)
    if (r.type == 7 && r.object_type == 2 && r.name == ring) {
      EXPECT_EQ(arg(r, "process"), pid);
      track = r.koid;
    }
  ASSERT_TRUE(track) << "no track named " << ring;

  // Its counters, at the entry and exit of each of the 5 enters, as
  // Perfetto reads them: a sample carries the values that changed, and each
  // series holds its value until its next sample.
  for (const auto &r : t.records)
    if (r.type == 4 && r.event_type == 1) {
      EXPECT_EQ(r.name, std::string(ring) + " queues");
      EXPECT_EQ(r.tid, *track);
      EXPECT_EQ(r.pid, pid);
    }
  std::vector<Queues> seen = queue_samples(t, std::string(ring) + " queues");
  ASSERT_EQ(seen.size(), 10u);
  ASSERT_EQ(t.named("io_uring_enter").size(), 5u);
  for (const auto *enter : t.named("io_uring_enter"))
    EXPECT_EQ(arg(*enter, "flags") & kRegisteredRing, enter_flags);
  int all = kNops - kReap + 2 + kDepth;
  std::vector<std::pair<int, Queues>> expected = {
      {0, {0, kDepth, 0}},
      {1, {kDepth, 0, 0}},
      {2, {kDepth, kNops, 0}},
      {3, {kDepth, 0, kNops}},
      {4, {kDepth, 1, kNops - kReap}},
      {5, {kDepth, 0, kNops - kReap + 1}},
      // 6: enter 4's entry, when the reads may or may not have completed yet
      {7, {0, 0, all}},
      {8, {0, 1, 0}},
      {9, {0, 0, 1}},
  };
  for (const auto &[i, queues] : expected)
    EXPECT_EQ(seen[i], queues) << "counter " << i;
  EXPECT_EQ(seen[6].sq, 1);

  // Reaping, seen at the next enter: REAP after enter 2, all after enter 4.
  std::vector<std::pair<uint64_t, uint64_t>> reaped;
  for (const auto *r : t.named("reaped")) {
    EXPECT_EQ(r->tid, *track);
    reaped.push_back({arg(*r, "reaped"), arg(*r, "cq_head")});
  }
  std::vector<std::pair<uint64_t, uint64_t>> want = {{kReap, kReap}, {all, kReap + all}};
  EXPECT_EQ(reaped, want);
}

TEST_F(E2eUringViews, EachRingHasATrackWithItsQueuesAtEveryEnter) {
  expect_queues_at_every_enter(queues_command(), 0);
}

// liburing's io_uring_register_ring_fd: each enter names the ring by its
// index among the task's registered rings (IORING_ENTER_REGISTERED_RING),
// which is no fd of the process.
TEST_F(E2eUringViews, ARingEnteredByItsRegisteredIndexHasTheSameTrack) {
  expect_queues_at_every_enter(queues_command(" registered"), kRegisteredRing);
}

// More requests in flight than the tracer's table of them holds
// (--requests 64, and 512 timeouts in flight): each request that gave way
// is counted, and the summary says so, instead of leaving the count
// silently short.
TEST_F(E2eUringViews, RequestsThatGaveWayInTheTableAreCountedNotSilentlyLost) {
  constexpr int kInFlight = 512, kTable = 64;
  auto [t, r] = run_uring(workload("uring_in_flight") + " " + std::to_string(kInFlight),
                          {"-f", "json"}, {"--requests", std::to_string(kTable)});
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  int untracked = summary["requests_untracked"].get<int>();
  EXPECT_GE(untracked, kInFlight - kTable) << summary.dump();
  EXPECT_EQ(summary["requests"].get<int>() + untracked, kInFlight) << summary.dump();
  bool found = false;
  for (const auto &f : summary["findings"])
    found |= f["name"] == "requests_untracked" && f["evidence"]["requests"] == untracked;
  EXPECT_TRUE(found) << summary.dump();
  EXPECT_EQ(t.named("complete").size(), static_cast<size_t>(kInFlight - untracked));
  // The default table holds them all.
  auto whole =
      run_uring(workload("uring_in_flight") + " " + std::to_string(kInFlight), {"-f", "json"});
  EXPECT_EQ(data_of_type(json_lines(whole.second.out), "uring_summary")["requests"], kInFlight);
}

// Calls that only wait for completions submit nothing: the summary's
// enters and requests per enter leave them out (uring_in_flight 16: one
// enter submits the 16 timeouts, then the application waits in others).
TEST_F(E2eUringViews, EntersThatOnlyWaitAreNotCountedAsSubmitting) {
  auto [t, r] = run_uring(workload("uring_in_flight") + " 16", {"-f", "json"});
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  size_t waits = 0;
  for (const auto *e : t.named("io_uring_enter"))
    waits += arg(*e, "to_submit") == 0;
  EXPECT_GE(waits, 1u);
  EXPECT_EQ(t.named("io_uring_enter").size(), waits + 1);
  EXPECT_EQ(summary["enters"], 1);
  EXPECT_EQ(summary["submitted"], 16);
  EXPECT_DOUBLE_EQ(summary["requests_per_enter"].get<double>(), 16.0);
}

// Requests with IOSQE_CQE_SKIP_SUCCESS post no completion unless they
// fail, nor the requests linked after one that fails (the kernel skips
// theirs too): tests/workloads/uring_skip.c makes 27 requests, of which 19
// post no completion. They are not left in flight, and the summary counts
// them apart from the completions.
TEST_F(E2eUringViews, RequestsThatSkipTheirCompletionAreNotLeftInFlight) {
  auto [t, r] = run_uring(workload("uring_skip"), {"-f", "json"});
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  EXPECT_EQ(summary["requests"], 8);
  EXPECT_EQ(summary["requests_skipping"], 19);
  EXPECT_EQ(summary["submitted"], 27);
  EXPECT_EQ(summary["requests_untracked"], 0);
  EXPECT_EQ(t.named("submit").size(), 27u);
  EXPECT_EQ(t.named("complete").size(), 8u);
  for (const auto &rec : t.records)
    if (rec.type == 4 && rec.event_type == 1 && find_arg(rec, "in_flight")) {
      EXPECT_EQ(signed_arg(rec, "in_flight"), 0) << "at " << rec.ts;
    }
  auto text = run_uring(workload("uring_skip")).second;
  EXPECT_TRUE(contains(text.err, "19 more requests posted no completion")) << text;
}

// A buffered read that comes back short at the end of a cached file arms
// a page wait to read on, and finds the end there: it ran inline, and is
// counted so, not as retried (mpd's reads were).
TEST_F(E2eUringViews, ReadsShortAtTheEndOfACachedFileRanInline) {
  auto [t, r] = run_uring(workload("uring_short_reads") + " 50", {"-f", "json"});
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  ASSERT_EQ(summary["ops"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["ops"][0]["op"], "READV");
  EXPECT_EQ(summary["ops"][0]["path"], "inline");
  EXPECT_EQ(summary["ops"][0]["requests"], 50);
}

// A zero-copy send completes with its result (more to follow), then with
// a notification the kernel posts from a request of its own, the send's
// being freed at its result: the send's flow ends at its result, and the
// summary counts it once.
// The trace and summary of uring_send_zc COMMAND, of SENDS sends: each
// ends at its result.
void expect_sends_ending_at_their_results(const std::string &command, int sends) {
  auto [t, r] = run_uring(command, {"-f", "json"});
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  EXPECT_EQ(summary["requests"], sends);
  ASSERT_EQ(summary["ops"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["ops"][0]["op"], "SEND_ZC");
  EXPECT_EQ(t.named("complete").size(), static_cast<size_t>(sends));
  for (const auto *c : t.named("complete")) {
    EXPECT_EQ(arg(*c, "res"), 4096u);
    EXPECT_TRUE(arg(*c, "cflags") & 2);  // IORING_CQE_F_MORE: the notification follows
  }
  EXPECT_EQ(t.flow_points(8), static_cast<size_t>(sends));
  EXPECT_EQ(ended_requests(t).size(), static_cast<size_t>(sends));
}

// Serial: each send may take the address of the one before, freed at its
// result, while that one's notification is still to come.
TEST_F(E2eUringViews, AZeroCopySendEndsAtItsResult) {
  constexpr int kSends = 3;
  auto probe = run(Command{{workload("uring_send_zc"), std::to_string(kSends)}});
  if (probe.exit_code == 77)
    GTEST_SKIP() << probe.err;
  ASSERT_EQ(probe.exit_code, 0) << probe;
  for (const char *mode : {"", " serial"}) {
    SCOPED_TRACE(mode);
    expect_sends_ending_at_their_results(
        workload("uring_send_zc") + " " + std::to_string(kSends) + mode, kSends);
  }
}

// A ring set up with IORING_SETUP_REGISTERED_FD_ONLY has no fd: the index
// its creation names is no fd of the process, and an io_uring_enter on
// the fd of that number (another file, which the kernel refuses) is no
// enter of the ring.
TEST_F(E2eUringViews, ARingWithoutAnFdIsEnteredOnlyByItsIndex) {
  auto probe = run(Command{{workload("uring_fd_only")}});
  if (probe.exit_code == 77)
    GTEST_SKIP() << probe.err;
  ASSERT_EQ(probe.exit_code, 0) << probe;
  Trace t = trace_of(workload("uring_fd_only"));
  auto creates = t.named("create");
  ASSERT_EQ(creates.size(), 1u);
  auto enters = t.named("io_uring_enter");
  ASSERT_EQ(enters.size(), 1u);
  EXPECT_EQ(arg(*enters[0], "flags") & kRegisteredRing, kRegisteredRing);
  EXPECT_EQ(arg(*enters[0], "fd"), arg(*creates[0], "fd"));
  EXPECT_EQ(t.named("submit").size(), 1u);
  EXPECT_EQ(t.named("complete").size(), 1u);
}

// The summary's row for (op, path) in its JSON data, or null.
nlohmann::json op_row(const nlohmann::json &summary, const std::string &op,
                      const std::string &path) {
  for (const auto &row : summary["ops"])
    if (row["op"] == op && row["path"] == path)
      return row;
  return nullptr;
}

TEST_F(E2eUringViews, SummaryGivesCountsAndLatencyPerOpcodeAndPath) {
  auto [t, r] = run_uring(queues_command(), {"-f", "json"});
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  int requests = kDepth + kNops + 3;
  EXPECT_EQ(summary["requests"], requests);
  EXPECT_EQ(summary["enters"], 5);
  EXPECT_EQ(summary["submitted"], requests);
  EXPECT_DOUBLE_EQ(summary["requests_per_enter"].get<double>(), requests / 5.0);
  EXPECT_EQ(summary["io_workers"], 0);
  EXPECT_EQ(summary["lost"], 0);
  ASSERT_EQ(summary["ops"].size(), 2u) << summary.dump();
  auto nops = op_row(summary, "NOP", "inline"), reads = op_row(summary, "READ", "poll");
  ASSERT_TRUE(nops.is_object() && reads.is_object()) << summary.dump();
  EXPECT_EQ(nops["requests"], kNops + 3);
  EXPECT_EQ(reads["requests"], kDepth);
  // The reads waited WAIT_MS for their bytes; a quantile is interpolated
  // within a slot 1/8 as wide as its values, so it is within 1/8 of them.
  double wait_us = kWaitMs * 1000.0;
  for (const char *q : {"p50_us", "p99_us"}) {
    EXPECT_GE(reads[q].get<double>(), wait_us * 7 / 8) << q;
    EXPECT_LE(reads[q].get<double>(), wait_us * 1.25 + 5000) << q;
    EXPECT_LT(nops[q].get<double>(), wait_us) << q;
  }
  EXPECT_LE(reads["p50_us"].get<double>(), reads["p99_us"].get<double>());
}

TEST_F(E2eUringViews, SummaryIsPrintedOnStderrAsText) {
  auto [t, r] = run_uring(queues_command());
  EXPECT_TRUE(contains(r.err,
                       "io_uring: 16 requests completed, 5 io_uring_enter calls "
                       "submitting 3.20 requests each, 0 io-workers, 0 events lost\n"))
      << r;
  EXPECT_TRUE(
      contains(r.err, "OPCODE             PATH        REQUESTS      P50(us)      P99(us)\n"))
      << r;
  std::map<std::string, std::string> rows;
  for (const auto &line : lines(r.err)) {
    std::istringstream in(line);
    std::string op, path, count;
    if (in >> op >> path >> count)
      rows[op + " " + path] = count;
  }
  EXPECT_EQ(rows["NOP inline"], std::to_string(kNops + 3)) << r;
  EXPECT_EQ(rows["READ poll"], std::to_string(kDepth)) << r;
  EXPECT_TRUE(r.out.empty()) << r;
}

// uring_batches makes one enter per batch: batches of 1..10 submit 5.5
// requests per enter on average.
TEST_F(E2eUringViews, SummaryAveragesRequestsPerEnter) {
  auto [t, r] = run_uring(workload("uring_batches") + " 1 2 3 4 5 6 7 8 9 10", {"-f", "json"});
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  EXPECT_EQ(summary["enters"], 10);
  EXPECT_EQ(summary["submitted"], 55);
  EXPECT_DOUBLE_EQ(summary["requests_per_enter"].get<double>(), 5.5);
  ASSERT_EQ(summary["ops"].size(), 1u);
  EXPECT_EQ(op_row(summary, "NOP", "inline")["requests"], 55);
}

TEST_F(E2eUringViews, FindingsNameSmallBatchesOnlyWhereThereAreSome) {
  // One NOP per enter, then 8 per enter.
  auto [t1, small] = run_uring(workload("uring_batches") + " 1 1 1 1", {"-f", "json"});
  auto found = findings_of(small);
  ASSERT_EQ(found.count("small_batches"), 1u) << small;
  EXPECT_EQ(found["small_batches"]["evidence"]["enters"], 4);
  EXPECT_DOUBLE_EQ(found["small_batches"]["evidence"]["requests_per_enter"].get<double>(), 1.0);
  auto [t2, big] = run_uring(workload("uring_batches") + " 8 8 8", {"-f", "json"});
  EXPECT_TRUE(findings_of(big).empty()) << big;
}

TEST_F(E2eUringViews, FindingsNameCqOverflowOnlyWhereThereIsOne) {
  auto [t1, over] = run_uring(workload("uring_overflow") + " 10", {"-f", "json"});
  auto found = findings_of(over);
  ASSERT_EQ(found.count("cq_overflow"), 1u) << over;
  EXPECT_EQ(found["cq_overflow"]["evidence"]["overflows"], 36);
  auto [t2, fits] = run_uring(workload("uring_overflow") + " 1", {"-f", "json"});
  EXPECT_EQ(findings_of(fits).count("cq_overflow"), 0u) << fits;
  // In text, after the table (with late_reaping before it where the
  // machine was slow enough).
  auto [t3, text] = run_uring(workload("uring_overflow") + " 10");
  size_t findings = text.err.find("findings:\n");
  EXPECT_NE(findings, std::string::npos) << text;
  EXPECT_NE(
      text.err.find("\n  cq_overflow: 36 completions found the completion queue full", findings),
      std::string::npos)
      << text;
}

// A ring table of 4 (--rings 4, one bucket): of 6 rings open at once, the
// 5th and 6th take the places of the 1st and 2nd (none has submitted yet:
// those were idle longest), whose requests are then not traced, and the
// summary says so. Rings closed one by one free their places: 10 rings in
// a row are all traced.
TEST_F(E2eUringViews, RingsBeyondTheTableAreCountedAndClosedRingsMakeRoom) {
  auto [t1, crowded] =
      run_uring(workload("uring_rings") + " 6 3 together", {"-f", "json"}, {"--rings", "4"});
  auto found = findings_of(crowded);
  ASSERT_EQ(found.count("rings_untraced"), 1u) << crowded;
  EXPECT_EQ(found["rings_untraced"]["evidence"]["rings"], 2);
  auto creates = t1.named("create");
  ASSERT_EQ(creates.size(), 6u);
  std::sort(creates.begin(), creates.end(),
            [](const auto *a, const auto *b) { return a->ts < b->ts; });
  std::map<uint64_t, int> submits_per_ring;
  for (const auto *s : t1.named("submit"))
    submits_per_ring[arg(*s, "ring")]++;
  for (size_t i = 0; i < creates.size(); i++)
    EXPECT_EQ(submits_per_ring[arg(*creates[i], "ring")], i < 2 ? 0 : 3) << "ring " << i + 1;
  EXPECT_EQ(t1.named("complete").size(), 12u);

  auto [t2, in_turn] =
      run_uring(workload("uring_rings") + " 10 3 one_by_one", {"-f", "json"}, {"--rings", "4"});
  EXPECT_EQ(findings_of(in_turn).count("rings_untraced"), 0u) << in_turn;
  EXPECT_EQ(t2.named("submit").size(), 30u);
  EXPECT_EQ(t2.named("complete").size(), 30u);
}

// A ring whose place another takes while one of its enters waits: that
// enter's slice says it submitted and completed nothing counted, not a
// difference of counts from two rings' states.
TEST_F(E2eUringViews, AnEnterWhoseRingGaveWayCountsNothing) {
  auto [t, r] = run_uring(workload("uring_evicted"), {"-f", "json"}, {"--rings", "4"});
  EXPECT_EQ(findings_of(r).count("rings_untraced"), 1u) << r;
  auto enters = t.named("io_uring_enter");
  ASSERT_EQ(enters.size(), 6u) << r;  // ring A's 2, the others' 4
  std::sort(enters.begin(), enters.end(),
            [](const auto *a, const auto *b) { return a->ts < b->ts; });
  for (const auto *e : enters) {
    EXPECT_LE(arg(*e, "submitted"), arg(*e, "to_submit"));
    EXPECT_LE(arg(*e, "completed"), 2u);
  }
  std::vector<const mt::FxtRecord *> ring_a;  // by its fd, that of the first enter
  for (const auto *e : enters)
    if (arg(*e, "fd") == arg(*enters.front(), "fd"))
      ring_a.push_back(e);
  ASSERT_EQ(ring_a.size(), 2u);
  EXPECT_EQ(arg(*ring_a[0], "submitted"), 2u);
  EXPECT_EQ(arg(*ring_a[1], "ret"), 1u);
  EXPECT_EQ(arg(*ring_a[1], "submitted"), 0u) << "the wait, its ring's place taken meanwhile";
}

TEST_F(E2eUringViews, RingsMustBeAPowerOfTwo) {
  auto r = run(mt({"-c", "true", "uring", "--rings", "6"}), 60s);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "uring.lua:")) << r;
  EXPECT_TRUE(contains(r.err, "--rings must be a power of two from 4 to 65536, not 6")) << r;
}

// More io-workers at once than CPUs: uring_fanout blocks one worker per
// request until it has as many as it asked for.
TEST_F(E2eUringViews, FindingsNameIoWorkerFanoutOnlyWhereWorkersOutnumberCpus) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN), n = cpus + 2;
  auto [t1, wide] = run_uring(workload("uring_fanout") + " " + std::to_string(n), {"-f", "json"});
  auto found = findings_of(wide);
  ASSERT_EQ(found.count("io_worker_fanout"), 1u) << wide;
  // io-wq may start one more worker as the last free one blocks.
  const auto &evidence = found["io_worker_fanout"]["evidence"];
  long at_once = evidence["at_once"].get<long>();
  EXPECT_GE(at_once, n) << wide;
  EXPECT_LE(at_once, n + 1) << wide;
  EXPECT_GE(evidence["io_workers"].get<long>(), at_once) << wide;
  EXPECT_EQ(evidence["cpus"], cpus);
  auto create = t1.named("create");
  ASSERT_EQ(create.size(), 1u);
  EXPECT_EQ(evidence["pid"], create[0]->pid);
  // The trace's io-workers counter of that process reached as many.
  uint64_t most = 0;
  for (const auto &r : t1.records)
    if (r.type == 4 && r.event_type == 1 && r.name == "io-workers")
      most = std::max(most, arg(r, "io_workers"));
  EXPECT_EQ(most, static_cast<uint64_t>(at_once));
  auto [t2, one] = run_uring(workload("uring_fanout") + " 1", {"-f", "json"});
  auto single = findings_of(one);
  EXPECT_EQ(single.count("punted_to_io_wq"), 1u) << one;
  EXPECT_EQ(single.count("io_worker_fanout"), 0u) << one;
}

// uring_reap leaves 3 NOPs unreaped: when its process exits with the ring
// open, or when it closes the ring first.
TEST_F(E2eUringViews, FindingsNameUnreapedCompletionsOnlyWhereSomeAreLeft) {
  for (std::string how : {"", " close"}) {
    SCOPED_TRACE("uring_reap 10 0 3" + how);
    auto [t, left] = run_uring(workload("uring_reap") + " 10 0 3" + how, {"-f", "json"});
    auto found = findings_of(left);
    ASSERT_EQ(found.count("unreaped_completions"), 1u) << left;
    EXPECT_EQ(found["unreaped_completions"]["evidence"]["completions"], 3);
    EXPECT_EQ(found["unreaped_completions"]["evidence"]["rings"], 1);
    EXPECT_EQ(found.count("late_reaping"), 0u) << left;
  }
  auto [t, none] = run_uring(workload("uring_reap") + " 10 0 0 close", {"-f", "json"});
  EXPECT_EQ(findings_of(none).count("unreaped_completions"), 0u) << none;
}

// uring_reap reaps each batch of 4 NOPs 5 ms after it completed, without
// entering the kernel: the next batch's io_uring_enter sees it, so all but
// the last batch's are timed, one in 8 (the 1st, 9th, ... 33rd): 5.
TEST_F(E2eUringViews, FindingsNameLateReapingOnlyWhereCompletionsWait) {
  auto [t1, late] = run_uring(workload("uring_reap") + " 10 5 0", {"-f", "json"});
  auto summary = data_of_type(json_lines(late.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << late;
  EXPECT_EQ(summary["reaps_timed"], 5);
  auto found = findings_of(late);
  ASSERT_EQ(found.count("late_reaping"), 1u) << late;
  const auto &evidence = found["late_reaping"]["evidence"];
  EXPECT_EQ(evidence["completions"], 5);
  // Within the summary's 1/8, at least the 5 ms slept; at most a lot more.
  EXPECT_GE(evidence["p50_us"].get<double>(), 5000 * 7 / 8.0) << late;
  EXPECT_LT(evidence["p99_us"].get<double>(), 100000) << late;
  auto [t2, prompt] = run_uring(workload("uring_reap") + " 10 0 0", {"-f", "json"});
  summary = data_of_type(json_lines(prompt.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << prompt;
  EXPECT_EQ(summary["reaps_timed"], 5);
  EXPECT_LT(summary["reap_p50_us"].get<double>(), 1000) << prompt;
  EXPECT_EQ(findings_of(prompt).count("late_reaping"), 0u) << prompt;
}

// The io_uring_enter slices of `t` whose flags have `flag`.
uint64_t enters_with_flag(const Trace &t, uint64_t flag) {
  uint64_t n = 0;
  for (const auto *r : t.named("io_uring_enter"))
    n += (arg(*r, "flags") & flag) != 0;
  return n;
}
constexpr uint64_t kEnterSqWakeup = 2, kEnterSqWait = 4;

// An SQ poll thread that sleeps 1 ms after its last work, and an
// application that pauses 20 ms between batches: it wakes the thread for
// (almost) every batch. One that never pauses wakes it once, at most.
TEST_F(E2eUringViews, FindingsNameSqpollIdleOnlyWhereTheThreadHadToBeWoken) {
  auto [t1, idle] = run_uring(workload("uring_sqpoll") + " 40 pause 20", {"-f", "json"});
  auto found = findings_of(idle);
  ASSERT_EQ(found.count("sqpoll_idle"), 1u) << idle;
  // The thread submits: the application's calls are no submissions.
  EXPECT_EQ(data_of_type(json_lines(idle.out), "uring_summary")["enters"], 0) << idle;
  EXPECT_EQ(found.count("small_batches"), 0u) << idle;
  uint64_t wakeups = enters_with_flag(t1, kEnterSqWakeup);
  EXPECT_GE(wakeups, 4u);
  EXPECT_EQ(found["sqpoll_idle"]["evidence"]["wakeups"], wakeups);
  EXPECT_EQ(found.count("sqpoll_saturated"), 0u) << idle;
  auto [t2, steady] = run_uring(workload("uring_sqpoll") + " 200", {"-f", "json"});
  EXPECT_TRUE(findings_of(steady).empty()) << steady;
}

// An application that queues 4000 NOPs as fast as it can in a queue of 8
// outpaces its SQ poll thread: it waits for room.
TEST_F(E2eUringViews, FindingsNameSqpollSaturatedOnlyWhereTheQueueWasFull) {
  auto [t1, flood] = run_uring(workload("uring_sqpoll") + " 4000 flood", {"-f", "json"});
  auto found = findings_of(flood);
  ASSERT_EQ(found.count("sqpoll_saturated"), 1u) << flood;
  uint64_t waits = enters_with_flag(t1, kEnterSqWait);
  EXPECT_GE(waits, 1u);
  EXPECT_EQ(found["sqpoll_saturated"]["evidence"]["waits"], waits);
  // Waits for room are not submissions: no small_batches for them.
  EXPECT_EQ(found.count("small_batches"), 0u) << flood;
  auto [t2, steady] = run_uring(workload("uring_sqpoll") + " 200", {"-f", "json"});
  EXPECT_EQ(findings_of(steady).count("sqpoll_saturated"), 0u) << steady;
}

}  // namespace
}  // namespace e2e
