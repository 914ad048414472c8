// Scripts that add a layer to the io_uring trace: `require "uring"` adds
// uring.lua's probes and drawings to the script's, and its API gives the
// C for a request's flow, so the added drawings join the requests' flows.
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
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

// A bio bigger than the device takes is split, and the part split off is
// never queued: its block request is in the flow all the same. With 64 KiB
// requests at most, each of fio's four 256 KiB reads is four of them.
TEST_F(E2eUringLayers, TheBlockRequestsOfASplitBioAreInItsFlow) {
  Ext4Mount fs;
  chmod(fs.dir().c_str(), 0777);
  std::string limit = "/sys/block/" + fs.device().name() + "/queue/max_sectors_kb";
  ASSERT_TRUE(std::ofstream(limit) << "64\n") << limit;
  auto [trace, r] = run_traced("uring_block", "fio --name=job --filename=" + fs.dir() +
                                                  "/data --direct=1 --rw=read --bs=256k --size=1M "
                                                  "--iodepth=4 --ioengine=io_uring "
                                                  "--output-format=terse");
  EXPECT_FALSE(contains(r.err, "left out")) << r;
  auto issues = trace.named("block_issue");
  EXPECT_EQ(issues.size(), 16u) << r;
  uint64_t bytes = 0;
  for (const auto *e : issues)
    bytes += arg(*e, "bytes");
  EXPECT_EQ(bytes, 1u << 20);
  EXPECT_EQ(trace.named("block_complete").size(), 16u);
  EXPECT_EQ(trace.flow_points(9), 4u + 32u);  // file_get, and each block request's two
}

// The flow step drawn on each of `points` (a point holds one at its start
// on its thread): its flow id, or 0 where there is none.
std::vector<uint64_t> flows_of(const Trace &trace,
                               const std::vector<const mt::FxtRecord *> &points) {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> steps;  // (tid, ts) -> flow id
  for (const auto &e : trace.records)
    if (e.type == 4 && e.event_type == 9 && e.category == "io_uring")
      steps[{e.tid, e.ts}] = e.extra;
  std::vector<uint64_t> flows;
  for (const auto *p : points) {
    auto it = steps.find({p->tid, p->ts});
    flows.push_back(it == steps.end() ? 0 : it->second);
  }
  return flows;
}

std::string fio_on(const Ext4Mount &fs, const std::string &rw, const std::string &more = "") {
  return "fio --name=job --filename=" + fs.dir() + "/data --rw=" + rw +
         " --bs=4k --size=1M --iodepth=4 --ioengine=io_uring --output-format=terse " + more;
}

// The shipped uring_fs: fio's 256 buffered writes of 4 KiB, which ext4
// hands to io-workers. Each copies into the page cache once, drawn on the
// io-worker that runs it, as a step of its own request's flow.
TEST_F(E2eUringLayers, ABufferedWritesPageCacheCopyIsOnItsIoWorkerInItsFlow) {
  Ext4Mount fs;
  chmod(fs.dir().c_str(), 0777);
  auto [trace, r] = run_traced("uring_fs", fio_on(fs, "randwrite"));
  auto writes = trace.named("write_begin");
  ASSERT_EQ(writes.size(), 256u) << r;
  auto names = trace.thread_names_by_tid();
  auto write_flows = flows_of(trace, writes);
  std::set<uint64_t> flows(write_flows.begin(), write_flows.end()), offsets;
  for (const auto *w : writes) {
    EXPECT_TRUE(names[w->tid].starts_with("iou-wrk-")) << names[w->tid];
    offsets.insert(arg(*w, "pos"));
  }
  EXPECT_EQ(flows.size(), 256u);  // one per request, none without
  EXPECT_FALSE(flows.count(0));
  EXPECT_EQ(offsets.size(), 256u);
  // Each inside its request's issue slice where a probe sees io_issue_sqe,
  // else inside a stint of its io-worker on a CPU (but one the worker was
  // switched out in the middle of, which a lane of its own shows).
  auto hops = trace.named("issue").empty() ? trace.named("running") : trace.named("issue");
  for (const auto *w : writes) {
    if (w->event_type == 4) {
      EXPECT_EQ(std::count_if(hops.begin(), hops.end(),
                              [&](const mt::FxtRecord *s) {
                                return s->tid == w->tid && s->ts <= w->ts && w->extra <= s->extra;
                              }),
                1);
    }
  }
  EXPECT_EQ(trace.flow_points(8), 256u);
  EXPECT_EQ(trace.flow_points(10), 256u);
}

// fio's 256 buffered reads of a file in the page cache run inline: each
// finds its page once, drawn on the submitting thread inside its
// io_uring_enter, as a step of its request's flow.
TEST_F(E2eUringLayers, ACachedReadsPageLookupIsInsideItsEnterInItsFlow) {
  Ext4Mount fs;
  chmod(fs.dir().c_str(), 0777);
  ASSERT_EQ(
      run({{"/bin/sh", "-c", fio_on(fs, "write") + " && cat " + fs.dir() + "/data"}}).exit_code, 0);
  auto [trace, r] = run_traced("uring_fs", fio_on(fs, "randread", "--invalidate=0"));
  auto lookups = trace.named("get_pages");
  ASSERT_EQ(lookups.size(), 256u) << r;
  auto flows = flows_of(trace, lookups);
  EXPECT_EQ(std::set<uint64_t>(flows.begin(), flows.end()).size(), 256u);
  std::set<uint64_t> pages;
  for (const auto *l : lookups)
    pages.insert(arg(*l, "index"));
  EXPECT_EQ(pages.size(), 256u);
  auto enters = trace.named("io_uring_enter");
  size_t inside = 0;
  for (const auto *l : lookups)
    inside += std::count_if(enters.begin(), enters.end(), [&](const mt::FxtRecord *e) {
      return e->tid == l->tid && e->ts <= l->ts && l->ts < e->extra;
    });
  EXPECT_EQ(inside, 256u);
}

// fio's 256 reads of 4 KiB from a cold file (fio drops its pages first):
// each starts reading its page in once, in its own flow. Each then waits
// for the page and is issued again from task work; with no probe on
// io_issue_sqe here, that issue's page lookup is not drawn, and never
// counted to another request.
TEST_F(E2eUringLayers, AColdReadStartsReadingItsOwnPageIn) {
  Ext4Mount fs;
  chmod(fs.dir().c_str(), 0777);
  ASSERT_EQ(run({{"/bin/sh", "-c", fio_on(fs, "write", "--end_fsync=1")}}).exit_code,
            0);  // clean pages, which fio can drop
  auto [trace, r] = run_traced("uring_fs", fio_on(fs, "randread", "--invalidate=1"));
  auto readaheads = trace.named("readahead");
  ASSERT_EQ(readaheads.size(), 256u) << r;
  auto flows = flows_of(trace, readaheads);
  EXPECT_EQ(std::set<uint64_t>(flows.begin(), flows.end()).size(), 256u);
  EXPECT_FALSE(std::count(flows.begin(), flows.end(), 0u));
  // A lookup drawn is in the flow of the request whose page it is.
  std::map<uint64_t, uint64_t> page_of_flow;
  for (size_t i = 0; i < readaheads.size(); ++i)
    page_of_flow[flows[i]] = arg(*readaheads[i], "index");
  auto lookups = trace.named("get_pages");
  auto lookup_flows = flows_of(trace, lookups);
  for (size_t i = 0; i < lookups.size(); ++i) {
    auto page = page_of_flow.find(lookup_flows[i]);
    ASSERT_NE(page, page_of_flow.end());
    EXPECT_EQ(page->second, arg(*lookups[i], "index"));
  }
}

}  // namespace
}  // namespace e2e
