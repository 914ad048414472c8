// scripts/uring.lua on real workloads: the trace it writes is valid for
// Perfetto, and every request the workload made is one whole flow.
#include <algorithm>
#include <map>
#include <set>

#include "runtime/fxt_reader.h"
#include "tests/e2e/e2e_support.h"
#include "tests/fxt_validator.h"

namespace e2e {
namespace {

class E2eUring : public BpfTest {};

struct Trace {
  std::vector<mt::FxtRecord> records;
  // Events named `name` (slices and instants).
  std::vector<const mt::FxtRecord *> named(const std::string &name) const {
    std::vector<const mt::FxtRecord *> out;
    for (const auto &r : records)
      if (r.type == 4 && r.name == name && r.event_type != 8 && r.event_type != 9 &&
          r.event_type != 10)
        out.push_back(&r);
    return out;
  }
  size_t flow_points(int event_type) const {
    return std::count_if(records.begin(), records.end(), [&](const mt::FxtRecord &r) {
      return r.type == 4 && r.event_type == event_type;
    });
  }
  std::set<std::string> thread_names() const {
    std::set<std::string> names;
    for (const auto &r : records)
      if (r.type == 7 && r.object_type == 2)
        names.insert(r.name);
    return names;
  }
};

uint64_t arg(const mt::FxtRecord &r, const std::string &name) {
  for (const auto &a : r.args)
    if (a.name == name)
      return a.type == 1 || a.type == 3 ? static_cast<uint64_t>(a.i) : a.u;
  ADD_FAILURE() << "no argument " << name << " on " << r.name;
  return 0;
}

// Runs uring.lua on `command`, checks the trace is valid, returns it.
Trace trace_of(const std::string &command, std::vector<std::string> extra = {}) {
  TempDir dir;
  std::string file = dir.file("uring.fxt");
  std::vector<std::string> argv = {"-o", file, "-c", command, "uring"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run(mt(argv), 60s);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, ", 0 lost")) << r;
  auto problems = mt::testing::perfetto_problems_in_file(file);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  Trace t;
  t.records = mt::read_fxt(read_file(file));
  return t;
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

}  // namespace
}  // namespace e2e
