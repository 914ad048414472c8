// Flows whose points run in different processes and in interrupts: a
// block request issued by the traced writer completes in a softirq or a
// kworker, and its flow must end there, with -c as without it.
#include <signal.h>

#include <set>
#include <thread>

#include "tests/e2e/e2e_support.h"
#include "tests/e2e/loop_device.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eFlows : public BpfTest {};

constexpr uint64_t kWrites = 128;

struct BlockFlows {
  Trace trace;
  Result result;
  uint64_t dev = 0;       // the loop device's, as the block tracepoints give it
  std::string disk = {};  // its name (loopN)
};

// block_flows.lua on `kWrites` O_DIRECT writes to a fresh loop device:
// the writer run by -c, or, without `minus_c`, every process traced while
// the writer runs.
BlockFlows trace_block_flows(bool minus_c, std::vector<std::string> script_options = {}) {
  LoopDevice loop;
  TempDir dir;
  std::string file = dir.file("blocks.fxt");
  Command writer = direct_writes(loop.path(), kWrites, 4096);
  std::string command;
  for (const auto &a : writer.argv)
    command += (command.empty() ? "" : " ") + a;
  std::vector<std::string> argv = {"-o", file};
  if (minus_c)
    argv.insert(argv.end(), {"-c", command});
  argv.insert(argv.end(), {script("block_flows.lua"), "--dev", std::to_string(loop.dev())});
  argv.insert(argv.end(), script_options.begin(), script_options.end());
  BlockFlows out;
  out.dev = loop.dev();
  out.disk = loop.name();
  if (minus_c) {
    out.result = run(mt(argv), 60s);
  } else {
    Process tracer(mt(argv));
    EXPECT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
    uint64_t before = loop.writes_completed();
    auto w = run(writer);
    EXPECT_EQ(w.exit_code, 0) << w;
    for (int i = 0; i < 100 && loop.writes_completed() < before + kWrites; i++)
      std::this_thread::sleep_for(20ms);
    tracer.signal(SIGINT);
    out.result = tracer.wait();
  }
  out.trace = valid_trace(file);
  return out;
}

void expect_every_request_flows_into_other_tasks(const BlockFlows &b) {
  const auto &[trace, r, dev, disk] = b;
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, ", 0 lost")) << r;
  EXPECT_FALSE(contains(r.err, "left out")) << r;
  EXPECT_EQ(trace.named("issue").size(), kWrites);
  EXPECT_EQ(trace.named("complete").size(), kWrites);
  EXPECT_EQ(trace.flow_points(8, "moontrace"), kWrites);
  EXPECT_EQ(trace.flow_points(10, "moontrace"), kWrites);
  // The writer issues; the loop driver completes elsewhere.
  std::set<uint64_t> issuers, completers;
  for (const auto *e : trace.named("issue"))
    issuers.insert(e->pid);
  for (const auto *e : trace.named("complete"))
    completers.insert(e->pid);
  ASSERT_EQ(issuers.size(), 1u);
  EXPECT_FALSE(completers.count(*issuers.begin())) << "every completion ran in the writer";
}

TEST_F(E2eFlows, AFlowBegunInTheTracedProcessEndsInAnInterruptOrAnotherTask) {
  expect_every_request_flows_into_other_tasks(trace_block_flows(true));
}

TEST_F(E2eFlows, AFlowBegunInOneProcessEndsInAnother) {
  expect_every_request_flows_into_other_tasks(trace_block_flows(false));
}

// Completions run in whichever task the interrupt found: on the device's
// own track, under a process of its group, they are all in one place.
void expect_completions_on_one_device_track(const BlockFlows &b, const std::string &track_name) {
  const auto &[trace, r, dev, disk] = b;
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(trace.flow_points(8, "moontrace"), kWrites);
  EXPECT_EQ(trace.flow_points(10, "moontrace"), kWrites);
  auto completes = trace.named("complete");
  ASSERT_EQ(completes.size(), kWrites);
  std::set<std::pair<uint64_t, uint64_t>> tracks;
  for (const auto *e : completes)
    tracks.insert({e->pid, e->tid});
  ASSERT_EQ(tracks.size(), 1u);
  auto [pid, tid] = *tracks.begin();
  std::string process, thread;
  for (const auto &o : trace.records)
    if (o.type == 7 && o.koid == (o.object_type == 1 ? pid : tid))
      (o.object_type == 1 ? process : thread) = o.name;
  EXPECT_EQ(process, "block devices");
  EXPECT_EQ(thread, track_name);
}

TEST_F(E2eFlows, AFlowEndsOnTheTrackOfItsDeviceLabelledByNumber) {
  auto b = trace_block_flows(true, {"--on_device"});
  expect_completions_on_one_device_track(b, "dev " + std::to_string(b.dev));
}

TEST_F(E2eFlows, AFlowEndsOnTheTrackOfItsDeviceLabelledByName) {
  auto b = trace_block_flows(true, {"--by_name"});
  expect_completions_on_one_device_track(b, b.disk);
}

// Under -c a probe that ends flows runs in every task, and goes on only
// for a flow a traced event began: the completions of an untraced
// writer's requests on another device stay out.
TEST_F(E2eFlows, UnderMinusCEndsOfFlowsBegunElsewhereStayOut) {
  LoopDevice other;
  Process untraced(direct_writes(other.path(), 256, 4096, true));
  untraced.resume();
  auto [trace, r, dev, disk] = trace_block_flows(true, {"--any_device"});
  auto w = untraced.wait();
  EXPECT_EQ(w.exit_code, 0) << w;
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(trace.named("issue").size(), kWrites);
  EXPECT_EQ(trace.named("complete").size(), kWrites);
  EXPECT_EQ(trace.flow_points(10, "moontrace"), kWrites);
  EXPECT_FALSE(contains(r.err, "left out")) << r;
}

TEST_F(E2eFlows, EndsWithoutTheirBeginAreCountedNotHidden) {
  auto [trace, r, dev, disk] = trace_block_flows(false, {"--ends_only"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(trace.named("complete").size(), kWrites);
  EXPECT_EQ(trace.flow_points(10, "moontrace"), 0u);
  EXPECT_TRUE(contains(r.err, std::to_string(kWrites) + " flow steps and ends left out")) << r;
}

}  // namespace
}  // namespace e2e
