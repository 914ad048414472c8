// scripts/uring.lua on fio's io_uring engine: every request fio counts in its
// own JSON report is one whole flow in the trace, from a submit slice through
// its hops to a complete slice of the same request, on the threads the
// kernel really used (the submitter, the SQ poll thread, io-workers).
//
// fio 3.33 makes one ring per job and, beyond the job's reads or writes, only
// io_uring_register calls (a probe, then the buffers and files it is told to
// register): no other requests, so the counts must match exactly.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

using nlohmann::json;

class E2eUringFio : public BpfTest {};

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kRegisterBuffers = 0, kRegisterFiles = 2;
constexpr uint64_t kSetupDeferTaskrun = 1u << 13;

// fio's own counts for its one job, from --output-format=json.
struct FioCounts {
  uint64_t reads = 0, writes = 0, trims = 0, syncs = 0;
  uint64_t total() const { return reads + writes + trims + syncs; }
};

struct FioRun {
  Trace trace;
  Result result;  // moontrace's
  FioCounts counts;
  uint64_t expected_ios = 0;  // size / bs
};

// Runs `fio --ioengine=io_uring --bs=4k --size=MIB ... JOB_OPTIONS` under
// uring.lua on a file of MIB MiB in a private directory, written and synced
// by dd just before. The file must be in the page cache when fio reads it:
// fio drops its pages before a job unless --invalidate=0, and this machine
// pages out idle memory (a DAMON pageout scheme), so --pre_read=1 reads it
// once more with plain read(2)s, no io_uring requests, just before the job.
FioRun fio_traced(const std::string &job_options, int mib = 4) {
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);  // fio may run as SUDO_UID
  std::string data = dir.file("data"), report = dir.file("fio.json");
  auto dd = run(Command{{"dd", "if=/dev/zero", "of=" + data, "bs=1M",
                         "count=" + std::to_string(mib), "conv=fsync", "status=none"}});
  EXPECT_EQ(dd.exit_code, 0) << dd;
  chmod(data.c_str(), 0666);
  FioRun out;
  out.expected_ios = static_cast<uint64_t>(mib) * (1 << 20) / kBlock;
  std::tie(out.trace, out.result) = run_uring(
      "fio --name=job --filename=" + data +
      " --ioengine=io_uring --invalidate=0 --pre_read=1 --bs=4k --iodepth=8 --size=" +
      std::to_string(mib) + "M --output-format=json --output=" + report + " " + job_options);
  std::string text = read_file(report);
  json j = json::parse(text.substr(std::min(text.find('{'), text.size())), nullptr, false);
  if (j.is_discarded() || !j.contains("jobs") || j["jobs"].size() != 1) {
    ADD_FAILURE() << "fio's report is not one job of JSON: " << text;
    return out;
  }
  const json &job = j["jobs"][0];
  EXPECT_EQ(job["error"].get<int>(), 0) << text;
  out.counts.reads = job["read"]["total_ios"].get<uint64_t>();
  out.counts.writes = job["write"]["total_ios"].get<uint64_t>();
  out.counts.trims = job["trim"]["total_ios"].get<uint64_t>();
  out.counts.syncs = job["sync"]["total_ios"].get<uint64_t>();
  return out;
}

// The summary's requests by (opcode, path), from its text table.
std::map<std::pair<std::string, std::string>, uint64_t> requests_by_path(const std::string &err) {
  std::map<std::pair<std::string, std::string>, uint64_t> rows;
  static const std::regex row(R"(^(\S+) +(inline|poll|io-worker|retried) +(\d+) )");
  for (const auto &line : lines(err)) {
    std::smatch m;
    if (std::regex_search(line, m, row))
      rows[{m[1], m[2]}] = std::stoull(m[3]);
  }
  return rows;
}

bool starts_with(const std::string &s, const std::string &prefix) {
  return s.rfind(prefix, 0) == 0;
}

// How many events of `name` lie on threads whose name starts with `prefix`.
size_t on_threads(const Trace &t, const std::string &name, const std::string &prefix) {
  auto names = t.thread_names_by_tid();
  size_t n = 0;
  for (const auto *r : t.named(name))
    n += starts_with(names[r->tid], prefix);
  return n;
}

// The `outer` slice on the thread of `r` that ends first at or after `r`
// ends: the one holding `r` if any does. Found by the end alone, which
// uring.lua draws right (see the syscall start note below).
const mt::FxtRecord *holder(const Trace &t, const mt::FxtRecord &r, const std::string &outer) {
  uint64_t end = r.event_type == 4 ? r.extra : r.ts;
  const mt::FxtRecord *best = nullptr;
  for (const auto *o : t.named(outer))
    if (o->tid == r.tid && o->event_type == 4 && o->extra >= end &&
        (!best || o->extra < best->extra))
      best = o;
  return best;
}

// The flows as Perfetto draws them: each flow point binds to the innermost
// slice open on its thread at its time (equal times in file order), and a
// flow is whole when it begins on a submit slice, steps only on hops and
// ends on a complete slice, every one of them of the same request.
struct Flows {
  size_t begins = 0, whole = 0;
  std::map<std::string, size_t> steps;  // by the name of the slice a step binds to
  std::vector<std::pair<const mt::FxtRecord *, const mt::FxtRecord *>> ends;  // submit, complete
  std::vector<std::string> problems;                                          // the first few
  void problem(const std::string &p) {
    if (problems.size() < 10)
      problems.push_back(p);
  }
};

Flows flows_of(const Trace &t) {
  struct Point {
    uint64_t ts, offset;
    int kind;
    const mt::FxtRecord *slice;
  };
  std::map<uint64_t, std::vector<const mt::FxtRecord *>> by_tid;
  for (const auto &r : t.records)
    if (r.type == 4 && (r.event_type == 4 || (r.event_type >= 8 && r.event_type <= 10)))
      by_tid[r.tid].push_back(&r);
  Flows out;
  std::map<std::pair<uint64_t, uint64_t>, std::vector<Point>> points;  // by (pid, flow id)
  for (auto &[tid, events] : by_tid) {
    std::sort(events.begin(), events.end(), [](const auto *a, const auto *b) {
      return a->ts != b->ts ? a->ts < b->ts : a->offset < b->offset;
    });
    std::vector<const mt::FxtRecord *> open;
    for (const auto *e : events) {
      while (!open.empty() && open.back()->extra <= e->ts)
        open.pop_back();
      if (e->event_type == 4) {
        open.push_back(e);
      } else if (open.empty()) {
        out.problem("flow point at " + std::to_string(e->ts) + " on tid " + std::to_string(tid) +
                    " has no slice");
      } else {
        points[{e->pid, e->extra}].push_back({e->ts, e->offset, e->event_type, open.back()});
      }
    }
  }
  static const std::set<std::string> hops = {
      "file_get", "queue_async_work", "poll_arm",   "task_add", "defer",
      "link",     "fail_link",        "req_failed", "complete"};
  auto judge = [&](const std::vector<Point> &flow, uint64_t id) {
    std::string where = "flow " + std::to_string(id) + ": ";
    const auto &first = *flow.front().slice, &last = *flow.back().slice;
    if (first.name != "submit" || last.name != "complete")
      return out.problem(where + "from " + first.name + " to " + last.name);
    // The submit names the request; the hops carry only what is their own.
    if (!find_arg(first, "req") || !find_arg(first, "user_data"))
      return out.problem(where + "its submit does not name the request");
    for (const auto &p : flow)
      if (p.kind == 9 && !hops.count(p.slice->name))
        return out.problem(where + "steps on " + p.slice->name);
    out.whole++;
    out.ends.emplace_back(&first, &last);
  };
  for (auto &[key, list] : points) {
    std::sort(list.begin(), list.end(), [](const Point &a, const Point &b) {
      return a.ts != b.ts ? a.ts < b.ts : a.offset < b.offset;
    });
    std::vector<Point> flow;
    for (const auto &p : list) {
      if (p.kind == 8) {
        out.begins++;
        if (!flow.empty())
          out.problem("flow " + std::to_string(key.second) + " begins again before it ends");
        flow = {p};
        continue;
      }
      if (flow.empty()) {
        out.problem("flow " + std::to_string(key.second) + " has a point without a begin");
        continue;
      }
      flow.push_back(p);
      if (p.kind == 9) {
        out.steps[p.slice->name]++;
      } else {
        judge(flow, key.second);
        flow.clear();
      }
    }
    if (!flow.empty())
      out.problem("flow " + std::to_string(key.second) + " never ends");
  }
  return out;
}

std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const auto &l : lines)
    s += l + "\n";
  return s;
}

// Every request fio counted is one whole flow, and there are no others;
// the flows, for more checks.
Flows expect_one_whole_flow_per_io(const FioRun &run) {
  Flows flows = flows_of(run.trace);
  EXPECT_EQ(run.counts.total(), run.expected_ios);
  EXPECT_EQ(run.trace.flow_points(8), run.counts.total());
  EXPECT_EQ(run.trace.flow_points(10), run.counts.total());
  EXPECT_EQ(flows.begins, run.counts.total());
  EXPECT_EQ(flows.whole, run.counts.total());
  EXPECT_TRUE(flows.problems.empty()) << joined(flows.problems);
  EXPECT_EQ(run.trace.named("submit").size(), run.counts.total());
  EXPECT_EQ(run.trace.named("complete").size(), run.counts.total());
  // fio made one ring, in its job process.
  EXPECT_EQ(run.trace.named("create").size(), 1u);
  EXPECT_EQ(run.trace.named("io_uring_setup").size(), 1u);
  return flows;
}

// Requests by opcode name, from the submit slices.
std::map<std::string, size_t> ops_submitted(const Trace &t) {
  std::map<std::string, size_t> ops;
  for (const auto *r : t.named("submit"))
    ops[text_arg(*r, "op")]++;
  return ops;
}

TEST_F(E2eUringFio, CachedRandomReadsCompleteInlineEachOneWholeFlow) {
  FioRun run = fio_traced("--rw=randread");
  const Trace &t = run.trace;
  EXPECT_EQ(run.counts.reads, 1024u);
  EXPECT_EQ(run.counts.writes, 0u);
  Flows flows = expect_one_whole_flow_per_io(run);
  // Plain reads (READV if fio chose vectored ones), each of a whole block.
  for (const auto *r : t.named("submit")) {
    std::string op = text_arg(*r, "op");
    EXPECT_TRUE(op == "READ" || op == "READV") << op;
  }
  auto create = t.named("create");
  ASSERT_EQ(create.size(), 1u);
  EXPECT_FALSE(arg(*create[0], "sq_thread"));
  for (const auto *r : t.named("complete"))
    EXPECT_EQ(arg(*r, "res"), kBlock);
  // Inline: each read is looked up (file_get) and completed within the
  // io_uring_enter that submitted it; none goes to an io-worker.
  EXPECT_TRUE(t.named("queue_async_work").empty());
  EXPECT_EQ(flows.steps["file_get"], run.counts.reads);
  EXPECT_FALSE(contains(run.result.err, "punted_to_io_wq")) << run.result;
  // fio reaps every completion, at once.
  EXPECT_FALSE(contains(run.result.err, "unreaped_completions")) << run.result;
  EXPECT_FALSE(contains(run.result.err, "late_reaping")) << run.result;
  auto by_path = requests_by_path(run.result.err);
  EXPECT_EQ(by_path.size(), 1u) << run.result;
  EXPECT_EQ(by_path.begin()->first.second, "inline") << run.result;
  EXPECT_EQ(by_path.begin()->second, run.counts.reads) << run.result;
  EXPECT_EQ(flows.steps.size(), 1u);
  size_t inline_reads = 0, enter_starts_late = 0;
  for (const auto &[submit, complete] : flows.ends) {
    const auto *enter = holder(t, *submit, "io_uring_enter");
    inline_reads += enter && enter == holder(t, *complete, "io_uring_enter");
    enter_starts_late += enter && enter->ts > submit->ts;
  }
  EXPECT_EQ(inline_reads, run.counts.reads);
  // A syscall slice starts at its entry: one clock read gives both its
  // drawn end and its length.
  EXPECT_EQ(enter_starts_late, 0u);
  RecordProperty("io_uring_enter_slices_starting_after_their_submit",
                 std::to_string(enter_starts_late));
}

// Reads of a file whose page cache was dropped find their pages being read
// in: the kernel does not block them, it arms a wait on the page and issues
// the read again from task work once the page is there. The summary calls
// them retried (all but those whose pages another read brought in first);
// direct reads, which the device completes, stay inline.
TEST_F(E2eUringFio, UncachedBufferedReadsAreRetriedOnceTheirPagesAreIn) {
  FioRun run = fio_traced("--rw=randread --invalidate=1 --pre_read=0");
  EXPECT_EQ(run.counts.reads, 1024u);
  expect_one_whole_flow_per_io(run);
  auto by_path = requests_by_path(run.result.err);
  std::string op = by_path.count({"READV", "retried"}) ? "READV" : "READ";
  uint64_t retried = by_path[{op, "retried"}], inline_reads = by_path[{op, "inline"}];
  EXPECT_EQ(retried + inline_reads, run.counts.reads) << run.result;
  // As few as 918 of 1,024 in one run here.
  EXPECT_GE(retried, run.counts.reads * 4 / 5) << run.result;
  RecordProperty("retried_reads", std::to_string(retried));
  EXPECT_TRUE(run.trace.named("queue_async_work").empty());

  FioRun direct = fio_traced("--rw=randread --pre_read=0 --direct=1");
  EXPECT_EQ(direct.counts.reads, 1024u);
  for (const auto &[row, requests] : requests_by_path(direct.result.err))
    EXPECT_EQ(row.second, "inline") << direct.result;
}

TEST_F(E2eUringFio, BufferedWritesHopToIoWorkersEachOneWholeFlow) {
  FioRun run = fio_traced("--rw=write");
  const Trace &t = run.trace;
  EXPECT_EQ(run.counts.writes, 1024u);
  EXPECT_EQ(run.counts.reads, 0u);
  Flows flows = expect_one_whole_flow_per_io(run);
  EXPECT_EQ(ops_submitted(t), (std::map<std::string, size_t>{{"WRITE", run.counts.writes}}));
  // ext4 cannot write a buffered block without blocking: every write is
  // queued to an io-worker, a hop of its flow.
  EXPECT_EQ(flows.steps["queue_async_work"], run.counts.writes);
  EXPECT_EQ(flows.steps["file_get"], run.counts.writes);
  // And the summary says so.
  EXPECT_TRUE(contains(run.result.err,
                       "  punted_to_io_wq: 1024 of 1024 requests (100%) ran on "
                       "io-workers: WRITE 1024 (100%)\n"))
      << run.result;
  // fio 3.33 sets up its ring with DEFER_TASKRUN (and SINGLE_ISSUER): the
  // io-worker does not post the completion, it leaves it as task work that
  // fio's own thread runs when it waits (local_work_run). So all completions
  // are on fio's thread, none on an iou-wrk-* thread; that is the kernel's
  // behaviour, drawn right. The next test has completions on io-workers.
  auto create = t.named("create");
  ASSERT_EQ(create.size(), 1u);
  EXPECT_TRUE(arg(*create[0], "flags") & kSetupDeferTaskrun);
  EXPECT_FALSE(t.named("local_work_run").empty());
  EXPECT_EQ(on_threads(t, "complete", "iou-wrk-"), 0u);
  for (const auto *r : t.named("complete"))
    EXPECT_EQ(r->tid, create[0]->tid);
  // Still, the io-workers are there: each has a track of running slices,
  // and the summary counts them, as does the process's io-workers counter.
  auto names = t.thread_names_by_tid();
  std::set<uint64_t> workers;
  for (const auto *r : t.named("running")) {
    EXPECT_TRUE(starts_with(names[r->tid], "iou-wrk-")) << names[r->tid];
    EXPECT_EQ(r->pid, create[0]->pid);
    workers.insert(r->tid);
  }
  ASSERT_GE(workers.size(), 1u);
  EXPECT_TRUE(contains(run.result.err, ", " + std::to_string(workers.size()) + " io-workers, "))
      << run.result;
  uint64_t most = 0;
  for (const auto &r : t.records)
    if (r.type == 4 && r.event_type == 1 && r.name == "io-workers")
      most = std::max(most, arg(r, "io_workers"));
  EXPECT_GE(most, 1u);
  EXPECT_LE(most, workers.size());
}

TEST_F(E2eUringFio, BufferedWritesOnAnSqpollRingCompleteOnIoWorkers) {
  // With SQPOLL fio's ring has no DEFER_TASKRUN, so an io-worker posts its
  // write's completion itself.
  FioRun run = fio_traced("--rw=write --sqthread_poll=1", 2);
  const Trace &t = run.trace;
  EXPECT_EQ(run.counts.writes, 512u);
  Flows flows = expect_one_whole_flow_per_io(run);
  EXPECT_EQ(flows.steps["queue_async_work"], run.counts.writes);
  EXPECT_EQ(on_threads(t, "queue_async_work", "iou-sqp-"), run.counts.writes);
  EXPECT_EQ(on_threads(t, "complete", "iou-wrk-"), run.counts.writes);
  // Each completion an io-worker posts is inside one of its running slices.
  auto names = t.thread_names_by_tid();
  auto running = t.named("running");
  for (const auto *c : t.named("complete"))
    if (starts_with(names[c->tid], "iou-wrk-")) {
      EXPECT_TRUE(std::any_of(running.begin(), running.end(),
                              [&](const auto *r) {
                                return r->tid == c->tid && r->ts <= c->ts && r->extra >= c->extra;
                              }))
          << "complete at " << c->ts;
    }
  // The SQ poll thread has its running slices too.
  EXPECT_GT(on_threads(t, "running", "iou-sqp-"), 0u);
  // The io-workers' tracks belong to fio's job process.
  auto create = t.named("create");
  ASSERT_EQ(create.size(), 1u);
  for (const auto &r : t.records)
    if (r.type == 7 && r.object_type == 2 && starts_with(r.name, "iou-wrk-")) {
      EXPECT_EQ(arg(r, "process"), create[0]->pid);
    }
}

TEST_F(E2eUringFio, RegisteredFilesAndFixedBuffersReadFixed) {
  FioRun run = fio_traced("--rw=randread --registerfiles=1 --fixedbufs=1");
  const Trace &t = run.trace;
  EXPECT_EQ(run.counts.reads, 1024u);
  Flows flows = expect_one_whole_flow_per_io(run);
  EXPECT_EQ(ops_submitted(t), (std::map<std::string, size_t>{{"READ_FIXED", run.counts.reads}}));
  for (const auto *r : t.named("complete"))
    EXPECT_EQ(arg(*r, "res"), kBlock);
  // A registered file is found without io_uring_file_get: no hop at all.
  EXPECT_TRUE(flows.steps.empty());
  // io_uring_register slices for the 8 buffers (one per iodepth) and the 1
  // file, each holding its `register` instant; fio probes the opcodes too.
  auto slices = t.named("io_uring_register");
  auto instants = t.named("register");
  EXPECT_EQ(instants.size(), slices.size());
  for (const auto *r : instants) {
    const auto *slice = holder(t, *r, "io_uring_register");
    ASSERT_NE(slice, nullptr);
    EXPECT_EQ(arg(*slice, "opcode"), arg(*r, "opcode"));
  }
  std::map<uint64_t, uint64_t> nr_args;
  for (const auto *r : slices) {
    nr_args[arg(*r, "opcode")] = arg(*r, "nr_args");
    EXPECT_EQ(arg(*r, "ret"), 0u);
  }
  EXPECT_EQ(nr_args.count(kRegisterBuffers) ? nr_args[kRegisterBuffers] : 0, 8u);
  EXPECT_EQ(nr_args.count(kRegisterFiles) ? nr_args[kRegisterFiles] : 0, 1u);
  std::set<uint64_t> instant_opcodes;
  for (const auto *r : instants) {
    instant_opcodes.insert(arg(*r, "opcode"));
    EXPECT_EQ(arg(*r, "ret"), 0u);
    if (arg(*r, "opcode") == kRegisterFiles) {
      EXPECT_EQ(arg(*r, "nr_files"), 1u);
    }
    if (arg(*r, "opcode") == kRegisterBuffers) {
      EXPECT_EQ(arg(*r, "nr_bufs"), 8u);
    }
  }
  EXPECT_TRUE(instant_opcodes.count(kRegisterBuffers));
  EXPECT_TRUE(instant_opcodes.count(kRegisterFiles));
}

TEST_F(E2eUringFio, SqpollSubmitsOnTheSqThread) {
  FioRun run = fio_traced("--rw=randread --sqthread_poll=1", 2);
  const Trace &t = run.trace;
  EXPECT_EQ(run.counts.reads, 512u);
  Flows flows = expect_one_whole_flow_per_io(run);
  // The SQ poll thread, iou-sqp-<fio's job pid>, submits every read (fio
  // registers its file, as SQPOLL wants) and completes it inline.
  auto create = t.named("create");
  ASSERT_EQ(create.size(), 1u);
  std::string sqp = "iou-sqp-" + std::to_string(create[0]->pid);
  auto names = t.thread_names_by_tid();
  EXPECT_TRUE(arg(*create[0], "sq_thread"));
  for (const auto *r : t.named("submit")) {
    EXPECT_EQ(names[r->tid], sqp);
    EXPECT_NE(r->tid, create[0]->tid);
  }
  EXPECT_EQ(on_threads(t, "complete", sqp), run.counts.reads);
  EXPECT_EQ(ops_submitted(t), (std::map<std::string, size_t>{{"READ", run.counts.reads}}));
  EXPECT_TRUE(flows.steps.empty());
  // The SQ poll thread runs task work on every turn of its loop; only
  // runs that did something are drawn.
  size_t empty = 0, all = 0;
  for (const auto *r : t.named("task_work_run")) {
    all++;
    empty += arg(*r, "count") == 0;
  }
  EXPECT_EQ(empty, 0u);
  RecordProperty("task_work_run_instants", std::to_string(all));
  RecordProperty("task_work_run_instants_with_count_0", std::to_string(empty));
}

}  // namespace
}  // namespace e2e
