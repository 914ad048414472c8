// Scripts that add a layer to the io_uring trace: `require "uring"` adds
// uring.lua's probes and drawings to the script's, and its API gives the
// C for a request's flow, so the added drawings join the requests' flows.
#include <sys/stat.h>

#include <set>

#include "tests/e2e/loop_device.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eUringLayers : public BpfTest {};

// fio's 256 direct reads of 4 KiB through io_uring on a private ext4: each
// passes through iomap once, drawn as a step of its request's flow.
TEST_F(E2eUringLayers, ADirectReadsPassThroughIomapIsAStepOfItsRequestsFlow) {
  Ext4Mount fs;
  chmod(fs.dir().c_str(), 0777);  // fio may run as SUDO_UID
  auto [trace, r] = run_traced(script("uring_dio.lua"),
                               "fio --name=job --filename=" + fs.dir() +
                                   "/data --direct=1 --rw=read --bs=4k --size=1M --iodepth=4 "
                                   "--ioengine=io_uring --output-format=terse");
  EXPECT_FALSE(contains(r.err, "left out")) << r;
  auto dio = trace.named("iomap_dio");
  EXPECT_EQ(dio.size(), 256u);
  EXPECT_EQ(trace.named("submit").size(), 256u);
  EXPECT_EQ(trace.named("complete").size(), 256u);
  // Each iomap slice holds a step of a request's flow, which the submit
  // began and the completion ended (the validator checks the pairing).
  std::set<std::pair<uint64_t, uint64_t>> steps;  // (tid, ts)
  for (const auto &e : trace.records)
    if (e.type == 4 && e.event_type == 9 && e.category == "io_uring")
      steps.insert({e.tid, e.ts});
  size_t joined = 0;
  for (const auto *d : dio)
    joined += steps.count({d->tid, d->ts});
  EXPECT_EQ(joined, dio.size());
  EXPECT_EQ(trace.flow_points(8), 256u);
  EXPECT_EQ(trace.flow_points(10), 256u);
}

// The same, run as two scripts joined by '+': uring first, then the
// layer, whose `require "uring"` gets the running uring's API.
TEST_F(E2eUringLayers, ScriptsJoinedByPlusRunInOneSessionAndTrace) {
  Ext4Mount fs;
  chmod(fs.dir().c_str(), 0777);
  auto [trace, r] = run_traced("uring",
                               "fio --name=job --filename=" + fs.dir() +
                                   "/data --direct=1 --rw=read --bs=4k --size=1M --iodepth=4 "
                                   "--ioengine=io_uring --output-format=terse",
                               {}, {"--sample", "100", "+", script("uring_dio.lua")});
  EXPECT_EQ(trace.named("iomap_dio").size(), 256u);
  EXPECT_EQ(trace.named("submit").size(), 256u);
  EXPECT_EQ(trace.flow_points(9), 512u);  // file_get and iomap_dio
  // A script already required by one before it takes no options of its own.
  EXPECT_TRUE(one_line_error(run(mt({script("uring_dio.lua"), "+", "uring", "--sample", "50"})),
                             {"'uring' is in this session already", "give its options"}));
}

// The shipped uring_block: fio's 256 O_DIRECT reads or writes, each with
// its block request (one per 4 KiB: the loop device merges nothing) issued
// and completed on the disk's track, on the request's arrow.
void expect_each_block_request_in_its_flow_on_the_disks_track(const std::string &rw) {
  Ext4Mount fs;
  chmod(fs.dir().c_str(), 0777);
  auto [trace, r] = run_traced("uring_block", "fio --name=job --filename=" + fs.dir() +
                                                  "/data --direct=1 --rw=" + rw +
                                                  " --bs=4k --size=1M --iodepth=4 "
                                                  "--ioengine=io_uring --output-format=terse");
  EXPECT_FALSE(contains(r.err, "left out")) << r;
  auto issues = trace.named("block_issue"), completes = trace.named("block_complete");
  EXPECT_EQ(issues.size(), 256u);
  EXPECT_EQ(completes.size(), 256u);
  std::set<std::pair<uint64_t, uint64_t>> tracks, steps;
  for (const auto &e : trace.records)
    if (e.type == 4 && e.event_type == 9 && e.category == "io_uring")
      steps.insert({e.tid, e.ts});
  size_t joined = 0;
  for (const auto &block : {issues, completes})
    for (const auto *e : block) {
      tracks.insert({e->pid, e->tid});
      joined += steps.count({e->tid, e->ts});
    }
  EXPECT_EQ(joined, 512u);
  ASSERT_EQ(tracks.size(), 1u);
  auto names = trace.thread_names_by_tid();
  EXPECT_EQ(names[tracks.begin()->second], fs.device().name());
  // Each request's flow: submit, file_get, the block request, completion.
  EXPECT_EQ(trace.flow_points(8), 256u);
  EXPECT_EQ(trace.flow_points(9), 768u);
  EXPECT_EQ(trace.flow_points(10), 256u);
}

TEST_F(E2eUringLayers, ADirectReadsBlockRequestIsInItsFlowOnTheDisksTrack) {
  expect_each_block_request_in_its_flow_on_the_disks_track("read");
}

TEST_F(E2eUringLayers, ADirectWritesBlockRequestIsInItsFlowOnTheDisksTrack) {
  expect_each_block_request_in_its_flow_on_the_disks_track("write");
}

}  // namespace
}  // namespace e2e
