// scripts/uring.lua on real workloads: the trace it writes is valid for
// Perfetto, and every request the workload made is one whole flow.
#include <signal.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/e2e/json_lines.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eUring : public BpfTest {};

// tests/workloads/uring_demo (counts documented at the top of
// uring_demo.c, tested in depth in uring_demo_test.cpp): 2 rings, 41
// requests, each one flow; 40 of them traced as submitted by the kernel
// (all but user_data 5001, rejected before submission, whose flow begins
// at its req_failed).
constexpr uint64_t kDemoEntriesA = 32, kDemoEntriesB = 16;
constexpr size_t kDemoRequests = 41;
constexpr size_t kDemoRingASubmitted = 23, kDemoRingBSubmitted = 17;
// The user_data of the 40 submitted requests, sorted.
std::vector<uint64_t> demo_submitted() {
  std::vector<uint64_t> all;
  for (const auto &part :
       {sequence(101, 108), sequence(201, 208), std::vector<uint64_t>{301}, sequence(401, 404),
        std::vector<uint64_t>{501, 502}, sequence(1001, 1012), std::vector<uint64_t>{2001, 3001},
        sequence(4001, 4003)})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

// The trace holds one whole uring_demo run by process `pid`, told apart
// from anything else in it by pid: the process (named uring_demo), its own
// 2 rings and syscalls, and exactly the documented flows, each whole.
void expect_one_demo_run(const Trace &t, uint64_t pid) {
  SCOPED_TRACE("uring_demo pid " + std::to_string(pid));
  std::vector<std::string> names;
  for (const auto &r : t.records)
    if (r.type == 7 && r.object_type == 1 && r.koid == pid)
      names.push_back(r.name);
  EXPECT_EQ(names, std::vector<std::string>{"uring_demo"});
  // Its 2 rings, ring A (32 entries) first, each made in its own setup.
  std::vector<const mt::FxtRecord *> setups, creates;
  for (const auto *r : t.named("io_uring_setup"))
    if (r->pid == pid)
      setups.push_back(r);
  for (const auto *r : t.named("create"))
    if (r->pid == pid)
      creates.push_back(r);
  ASSERT_EQ(setups.size(), 2u);
  ASSERT_EQ(creates.size(), 2u);
  EXPECT_EQ(arg(*setups[0], "entries"), kDemoEntriesA);
  EXPECT_EQ(arg(*setups[1], "entries"), kDemoEntriesB);
  std::map<uint64_t, uint64_t> entries;  // ring -> sq_entries
  for (const auto *c : creates)
    entries[arg(*c, "ring")] = arg(*c, "sq_entries");
  ASSERT_EQ(entries.size(), 2u);
  // Its submits: the documented requests, each on one of its own rings.
  std::vector<uint64_t> submitted, completed;
  std::map<uint64_t, size_t> per_ring;
  for (const auto *r : t.named("submit")) {
    if (r->pid != pid)
      continue;
    submitted.push_back(arg(*r, "user_data"));
    uint64_t ring = arg(*r, "ring");
    EXPECT_TRUE(entries.count(ring)) << "user_data " << arg(*r, "user_data");
    per_ring[ring]++;
  }
  std::sort(submitted.begin(), submitted.end());
  EXPECT_EQ(submitted, demo_submitted());
  for (const auto &[ring, n] : per_ring)
    EXPECT_EQ(n, entries[ring] == kDemoEntriesA ? kDemoRingASubmitted : kDemoRingBSubmitted);
  for (const auto &[end, user_data] : ended_requests(t))
    if (end->pid == pid)
      completed.push_back(user_data);
  std::sort(completed.begin(), completed.end());
  auto all = demo_submitted();
  all.push_back(5001);  // rejected, completed with -EINVAL
  EXPECT_EQ(completed, all);
  // Its enters submit all 41, on its own rings' fds.
  std::set<uint64_t> fds;
  for (const auto *s : setups)
    fds.insert(arg(*s, "ret"));
  uint64_t to_submit = 0;
  for (const auto *r : t.named("io_uring_enter"))
    if (r->pid == pid) {
      EXPECT_TRUE(fds.count(arg(*r, "fd"))) << "enter on fd " << arg(*r, "fd");
      to_submit += arg(*r, "to_submit");
    }
  EXPECT_EQ(to_submit, kDemoRequests);
  // Its flows: one per drawn request, each begun once and ended once, and
  // no flow of it has a point in another process.
  std::map<uint64_t, std::pair<int, int>> flows;  // id -> (begins, ends)
  std::set<uint64_t> other_pids_flows;
  for (const auto &r : t.records) {
    if (r.type != 4 || r.event_type < 8 || r.event_type > 10 || r.category != "io_uring")
      continue;
    if (r.pid != pid) {
      other_pids_flows.insert(r.extra);
      continue;
    }
    flows[r.extra].first += r.event_type == 8;
    flows[r.extra].second += r.event_type == 10;
  }
  EXPECT_EQ(flows.size(), kDemoRequests);
  for (const auto &[id, points] : flows) {
    EXPECT_EQ(points, std::make_pair(1, 1)) << "flow " << id;
    EXPECT_FALSE(other_pids_flows.count(id)) << "flow " << id << " spans processes";
  }
  // Every thread of its events is its own: itself, its io-workers, its rings.
  for (const auto &r : t.records) {
    if (r.type == 7 && r.object_type == 2 && arg(r, "process") == pid) {
      EXPECT_TRUE(r.koid == pid || r.name == "iou-wrk-" + std::to_string(pid) ||
                  r.name.rfind("ring 0x", 0) == 0)
          << r.name;
    }
  }
}

TEST_F(E2eUring, EveryRequestOfAKnownMixIsOneWholeFlow) {
  // 40 NOPs (inline), 12 reads of a cached file (inline), 8 buffered writes
  // and 3 fsyncs (io-worker): 63 requests, user_data 1..63.
  Trace t = trace_of(workload("uring_mix") + " 40 12 8 3");
  EXPECT_EQ(t.flow_points(8), 63u);
  EXPECT_EQ(t.flow_points(10), 63u);
  std::vector<uint64_t> submitted, completed;
  for (const auto *r : t.named("submit"))
    submitted.push_back(arg(*r, "user_data"));
  for (const auto &[end, user_data] : ended_requests(t))
    completed.push_back(user_data);
  EXPECT_EQ(t.named("complete").size(), 63u);
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

// -o FILE.gz writes the same trace gzipped, which Perfetto and dump open.
TEST_F(E2eUring, TraceNamedGzIsGzipped) {
  TempDir dir;
  std::string file = dir.file("uring.fxt.gz");
  auto r = run(mt({"-o", file, "-c", workload("uring_mix") + " 40 12 8 3", "uring"}), 60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, ", 0 lost")) << r;
  EXPECT_TRUE(contains(r.err, "MB gzipped) to " + file)) << r;
  std::string bytes = read_file(file);
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_EQ(bytes.substr(0, 2), "\x1f\x8b");
  EXPECT_GT(mt::gunzip_if_gzipped(bytes).size(), 3 * bytes.size());
  Trace t = valid_trace(file);
  EXPECT_EQ(t.flow_points(8), 63u);
  EXPECT_EQ(t.flow_points(10), 63u);
  auto dumped = run(mt({"dump", file}));
  ASSERT_EQ(dumped.exit_code, 0) << dumped;
  size_t submits = 0;
  for (const auto &line : lines(dumped.out))
    submits += contains(line, " io_uring/submit ");
  EXPECT_EQ(submits, 63u) << dumped;
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

// Enters of 4,096 requests each: under -c each request's flow keeps its
// mark in the table of flows to follow, and each enter, which holds more
// hops than the sink keeps apart on a thread track, is drawn on its
// thread's track.
TEST_F(E2eUring, EntersOfThousandsOfRequestsAreWholeOnTheirThreadsTrack) {
  // A table of requests big enough that none of 4,096 in flight gives way.
  auto [t, r] = run_uring(workload("nop_storm") + " 40960 4096", {}, {"--requests", "1048576"});
  EXPECT_FALSE(contains(r.err, "taken by another")) << r;
  auto enters = t.named("io_uring_enter");
  EXPECT_EQ(enters.size(), 10u) << r;
  for (const auto *e : enters)
    EXPECT_EQ(e->event_type, 4) << "a complete slice, on its thread's track";
  EXPECT_EQ(ended_requests(t).size(), 40960u);
}

TEST_F(E2eUring, OverflowedCompletionsEndTheirFlowsAndAreMarkedOnTheRing) {
  // tests/workloads/uring_overflow.c: 4-entry queues, 10 batches of 4 NOPs
  // (user_data 1..40) submitted before any is reaped. The first batch fills
  // the completion queue; the other 36 NOPs overflow, in order.
  auto [t, r] = run_uring(workload("uring_overflow") + " 10");
  EXPECT_EQ(t.flow_points(8), 40u);
  EXPECT_EQ(t.flow_points(10), 40u);
  std::vector<uint64_t> ended;
  for (const auto &[end, user_data] : ended_requests(t))
    ended.push_back(user_data);
  EXPECT_EQ(ended, sequence(1, 40));
  size_t overflowed = 0;
  for (const auto *c : t.named("complete"))
    overflowed += find_arg(*c, "overflowed") != nullptr;
  EXPECT_EQ(overflowed, 36u);
  // On the ring's track: an overflow mark for each, counting them.
  auto marks = t.named("overflow");
  ASSERT_EQ(marks.size(), 36u);
  std::vector<uint64_t> counts, user_data;
  for (const auto *m : marks) {
    counts.push_back(arg(*m, "overflows"));
    user_data.push_back(arg(*m, "user_data"));
  }
  EXPECT_EQ(counts, sequence(1, 36));
  EXPECT_EQ(user_data, sequence(5, 40));
  std::set<uint64_t> tracks;
  for (const auto *m : marks)
    tracks.insert(m->tid);
  ASSERT_EQ(tracks.size(), 1u);
  std::string track_name;
  for (const auto &o : t.records)
    if (o.type == 7 && o.object_type == 2 && o.koid == *tracks.begin())
      track_name = o.name;
  EXPECT_EQ(track_name.rfind("ring 0x", 0), 0u) << track_name;
  EXPECT_TRUE(contains(r.err, "io_uring: 40 requests completed")) << r;
  EXPECT_TRUE(contains(r.err, "cq_overflow: 36 completions found the completion queue full")) << r;
}

TEST_F(E2eUring, SqpollSubmissionsAreDrawnOnTheSqThreadOfTheirProcess) {
  // tests/workloads/uring_sqpoll.c: 200 NOPs (user_data 1..200) taken from
  // the queue by the ring's SQ poll thread; the application enters only to
  // wake it, once.
  auto [t, r] = run_uring(workload("uring_sqpoll") + " 200");
  auto creates = t.named("create");
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(arg(*creates[0], "sq_thread"), 1u);
  auto submits = t.named("submit");
  ASSERT_EQ(submits.size(), 200u);
  std::set<uint64_t> tids, pids, rings;
  for (const auto *s : submits) {
    tids.insert(s->tid);
    pids.insert(s->pid);
    rings.insert(arg(*s, "ring"));
  }
  EXPECT_EQ(rings, std::set<uint64_t>{arg(*creates[0], "ring")});
  ASSERT_EQ(tids.size(), 1u);
  EXPECT_EQ(pids, std::set<uint64_t>{creates[0]->pid});
  EXPECT_NE(*tids.begin(), creates[0]->pid);
  std::string thread_name;
  for (const auto &o : t.records)
    if (o.type == 7 && o.object_type == 2 && o.koid == *tids.begin())
      thread_name = o.name;
  EXPECT_EQ(thread_name.rfind("iou-sqp-", 0), 0u) << thread_name;
  std::vector<uint64_t> ended;
  for (const auto &[end, user_data] : ended_requests(t))
    ended.push_back(user_data);
  EXPECT_EQ(ended, sequence(1, 200));
  EXPECT_LE(t.named("io_uring_enter").size(), 1u);
  EXPECT_TRUE(contains(r.err, "io_uring: 200 requests completed, ")) << r;
}

TEST_F(E2eUring, LostRecordsShowInTheTraceAndBreakNoFlow) {
  // A 64 KiB buffer per CPU holds about 1,000 records: with moontrace
  // stopped while a NOP storm runs, most of its records are lost.
  TempDir dir;
  std::string file = dir.file("lost.fxt");
  Process storm(stopped_nop_storm(100000));
  Command c = mt({"-o", file, "-p", std::to_string(storm.pid()), "uring"});
  c.env.push_back({"MOONTRACE_BUFFER_KB", "64"});
  Process tracer(c);
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
  tracer.signal(SIGSTOP);
  storm.resume();
  auto done = storm.wait(30s);
  tracer.signal(SIGCONT);
  ASSERT_EQ(done.exit_code, 0) << done;
  tracer.signal(SIGINT);
  auto r = tracer.wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  uint64_t lost = event_counts(r).lost;
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

// uring (with OPTION, if any) traces WORKLOAD by -p from when it is
// ready until the workload exits: the trace, which must be valid, and
// what moontrace printed.
std::pair<Trace, Result> trace_with_pid(const Command &workload, const std::string &option) {
  Process traced(workload);
  TempDir dir;
  std::vector<std::string> argv = {"-o", dir.file("t.fxt"), "-p", std::to_string(traced.pid()),
                                   "uring"};
  if (!option.empty())
    argv.push_back(option);
  Process tracer(mt(argv));
  EXPECT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
  auto done = traced.wait(30s);
  EXPECT_EQ(done.exit_code, 0) << done;
  tracer.signal(SIGINT);
  auto r = tracer.wait();
  EXPECT_EQ(r.exit_code, 0) << r;
  return {valid_trace(dir.file("t.fxt")), std::move(r)};
}

// A ring that existed before tracing is traced only with --all-rings: then
// it has its enter slices and no queue counters (its counts start at the
// claim), however its enters name it: by fd, or by its index
// among the thread's registered rings.
TEST_F(E2eUring, RingsThatExistedBeforeTracingOnlyWithAllRings) {
  for (auto [all, registered] : {std::pair{false, false}, {true, false}, {true, true}}) {
    // The ring is set up at once, used 4 s later: after attaching, even
    // for a sanitized moontrace on a busy machine (1.5 s was too short).
    std::vector<std::string> command = {workload("nop_storm"), "500", "8", "0", "4000"};
    if (registered)
      command.push_back("registered");
    auto [t, r] = trace_with_pid(Command{command}, all ? "--all-rings" : "");
    EXPECT_EQ(t.flow_points(8), all ? 500u : 0u) << "--all-rings " << all;
    EXPECT_EQ(t.named("io_uring_enter").size(), all ? 500u / 8 + 1 : 0u)
        << "--all-rings " << all << ", registered " << registered;
    // Each enter's slice still says what the call submitted and completed,
    // counted from the ring's claim at its first request.
    uint64_t submitted = 0, completed = 0;
    for (const auto *e : t.named("io_uring_enter")) {
      EXPECT_EQ(arg(*e, "submitted"), arg(*e, "ret")) << "registered " << registered;
      submitted += arg(*e, "submitted");
      completed += arg(*e, "completed");
    }
    EXPECT_EQ(submitted, all ? 500u : 0u);
    EXPECT_EQ(completed, all ? 500u : 0u);
    size_t counters = 0;
    for (const auto &rec : t.records)
      counters +=
          rec.type == 4 && rec.event_type == 1 && rec.name.find(" queues") != std::string::npos;
    EXPECT_EQ(counters, 0u) << "registered " << registered;
  }
}

// A process traced by -p from the middle of its work: the probes record
// only once all are attached, so its submits lie in enter slices but for
// the call the start cuts and the call the stop cuts (before, the probes
// attached first recorded alone: about 80 ms of submits without a call).
TEST_F(E2eUring, AProcessTracedFromTheMiddleOfItsWorkHasItsSubmitsInCalls) {
  Process storm(Command{{workload("nop_storm"), "60s", "1"}});
  TempDir dir;
  std::string file = dir.file("t.fxt");
  Process tracer(mt({"-o", file, "-p", std::to_string(storm.pid()), "uring", "--all-rings"}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
  std::this_thread::sleep_for(300ms);
  tracer.signal(SIGINT);
  auto r = tracer.wait(20s);
  ASSERT_EQ(r.exit_code, 0) << r;
  Trace t = valid_trace(file);
  auto calls = t.named("io_uring_enter");
  ASSERT_GT(calls.size(), 1000u) << r;
  size_t outside = 0;  // the calls, on one thread, are in time order
  for (const auto *submit : t.named("submit")) {
    auto after =
        std::upper_bound(calls.begin(), calls.end(), submit->ts,
                         [](uint64_t ts, const mt::FxtRecord *call) { return ts < call->ts; });
    outside += after == calls.begin() || submit->ts > (*std::prev(after))->extra;
  }
  // A slow sink (a sanitizer build) may lose calls' records.
  EXPECT_LE(outside, 2u + event_counts(r).lost) << r;
}

// An SQ poll ring made before tracing: its enters only wake its thread,
// and with --all-rings, which claims it at its first request seen, they
// are not counted as calls that submit (nor is small_batches found).
TEST_F(E2eUring, AnSqpollRingThatExistedBeforeTracingIsKnownForOne) {
  // 250 batches of 8 NOPs, 20 ms apart: tracing starts among them.
  auto [t, r] =
      trace_with_pid(Command{{workload("uring_sqpoll"), "2000", "pause", "20"}}, "--all-rings");
  EXPECT_GT(summary_count(r.err, "requests completed"), 0u) << r;
  EXPECT_TRUE(contains(r.err, " 0 io_uring_enter calls")) << r;
  EXPECT_FALSE(contains(r.err, "small_batches")) << r;
}

TEST_F(E2eUring, DrawnEventsGoToThreadProcessOrKeyedTracks) {
  TempDir dir;
  std::string file = dir.file("t.fxt");
  std::string script = dir.write("tracks.lua", R"(
fxt{ file = "unused.fxt" }
probe("tracepoint:io_uring:io_uring_complete", { draw = {
  { kind = "instant", name = "on_thread", args = { "args.user_data" } },
  { kind = "instant", name = "on_process", track = "process" },
  { kind = "instant", name = "on_parity", track = { id = "args.user_data % 2", name = "parity" } },
} })
)");
  auto r = run(mt({"-o", file, "-c", workload("nop_storm") + " 4", script}));
  ASSERT_EQ(r.exit_code, 0) << r;
  Trace t = valid_trace(file);
  auto names = t.thread_names();
  EXPECT_TRUE(names.count("nop_storm (process)")) << r;
  EXPECT_TRUE(names.count("parity 0x0") && names.count("parity 0x1")) << r;
  std::set<uint64_t> process_tracks, parity_tracks;
  for (const auto *e : t.named("on_process"))
    process_tracks.insert(e->tid);
  for (const auto *e : t.named("on_parity"))
    parity_tracks.insert(e->tid);
  EXPECT_EQ(t.named("on_thread").size(), 4u);
  EXPECT_EQ(process_tracks.size(), 1u);
  EXPECT_EQ(parity_tracks.size(), 2u);
  EXPECT_EQ(t.named("on_thread")[0]->tid, t.named("on_thread")[0]->pid);
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

// Two uring_demo processes under one -c: each is told apart by its pid,
// with its own 2 rings and exactly its documented flows.
TEST_F(E2eUring, SeveralTracedProcessesAreToldApart) {
  std::string demo = workload("uring_demo");
  Trace t = trace_of("sh -c '" + demo + " & " + demo + "; wait'");
  std::set<uint64_t> pids = t.pids();
  ASSERT_EQ(pids.size(), 2u);
  for (uint64_t pid : pids)
    expect_one_demo_run(t, pid);
  // Four rings in all, two per process, and nothing else.
  EXPECT_EQ(t.named("create").size(), 4u);
  EXPECT_EQ(t.named("io_uring_setup").size(), 4u);
  EXPECT_EQ(t.flow_points(8), 2 * kDemoRequests);
  EXPECT_EQ(t.flow_points(10), 2 * kDemoRequests);
}

// Without -c or -p, uring.lua traces every ring made while it runs, until
// Ctrl-C: a uring_demo started once it is ready is in the trace, whole.
// Other processes on this machine may use io_uring meanwhile: only the
// demo's pid is looked at.
TEST_F(E2eUring, WithoutCommandOrPidTracesRingsMadeUntilCtrlC) {
  TempDir dir;
  std::string file = dir.file("uring.fxt");
  Process tracer(mt({"-o", file, "uring"}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  Process demo({{workload("uring_demo")}});
  uint64_t pid = static_cast<uint64_t>(demo.pid());
  auto done = demo.wait(10s);
  ASSERT_EQ(done.exit_code, 0) << done;
  tracer.signal(SIGINT);
  auto r = tracer.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r;
  Trace t = valid_trace(file);
  SCOPED_TRACE(r.err);  // the event and lost counts
  expect_one_demo_run(t, pid);
}

// A stop asked for (SIGINT) while a ring runs flat out ends what the probes
// record and count at once: the summary counts what the trace holds
// (before, the probes went on counting while the rings were drained).
TEST_F(E2eUring, AfterAStopTheSummaryCountsWhatTheTraceHolds) {
  TempDir dir;
  std::string file = dir.file("t.fxt");
  Process tracer(mt({"-c", workload("nop_storm") + " 30s 1", "-o", file, "-f", "json", "uring"}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  std::this_thread::sleep_for(300ms);  // about 60 MB of trace
  tracer.signal(SIGINT);
  auto r = tracer.wait(20s);
  ASSERT_EQ(r.exit_code, 0) << r;
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  ASSERT_TRUE(summary.is_object()) << r;
  Trace t = valid_trace(file);
  EXPECT_GT(t.named("complete").size(), 1000u);
  // A slow sink (a sanitizer build) may lose records; the summary then
  // counts what the kernel saw, at most `lost` more than the trace holds.
  // The stop may cut the workload's one thread in a call: its submit is
  // traced, its exit, where `submitted` counts, is not.
  size_t lost = summary["lost"].get<size_t>();
  auto counts_what_the_trace_holds = [&](const char *counter, const char *slice, size_t cut) {
    size_t counted = summary[counter].get<size_t>(), drawn = t.named(slice).size();
    EXPECT_LE(drawn, counted + cut) << counter << "\n" << r;
    EXPECT_LE(counted, drawn + lost) << counter << "\n" << r;
  };
  counts_what_the_trace_holds("requests", "complete", 0);
  counts_what_the_trace_holds("enters", "io_uring_enter", 0);
  counts_what_the_trace_holds("submitted", "submit", 1);
}

}  // namespace
}  // namespace e2e
