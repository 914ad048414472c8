// In-kernel aggregations on real workloads whose counts are known: every
// figure printed must equal what the workload did.
#include <signal.h>

#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/e2e/e2e_support.h"
#include "tests/e2e/json_lines.h"
#include "tests/e2e/loop_device.h"

namespace e2e {
namespace {

using nlohmann::json;

class E2eAggregations : public BpfTest {};

// The rows of the aggregation or map called `name`.
json rows_of(const std::vector<json> &objects, const std::string &name) {
  for (const auto &o : objects)
    if (o.contains("data") && o["data"].is_object() && o["data"].value("name", "") == name)
      return o["data"].contains("rows") ? o["data"]["rows"] : o["data"]["entries"];
  ADD_FAILURE() << "no output named " << name;
  return json::array();
}

// {key value: value} of a count keyed by one field.
std::map<int64_t, int64_t> counts_by(const json &rows, const std::string &key) {
  std::map<int64_t, int64_t> counts;
  for (const auto &r : rows)
    counts[r[key].get<int64_t>()] = r["value"].get<int64_t>();
  return counts;
}

TEST_F(E2eAggregations, CompletionsPerOpcodeMatchTheWorkloadsMix) {
  // uring_mix NOPS READS WRITES FSYNCS; opcodes NOP 0, FSYNC 3, READ 22, WRITE 23.
  auto r =
      run(mt({"-f", "json", "-c", workload("uring_mix") + " 40 12 8 3", script("opcodes.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto objects = json_lines(r.out);
  std::map<int64_t, int64_t> expected = {{0, 40}, {3, 3}, {22, 12}, {23, 8}};
  EXPECT_EQ(counts_by(rows_of(objects, "submitted"), "opcode"), expected) << r;
  EXPECT_EQ(counts_by(rows_of(objects, "completed"), "opcode"), expected) << r;
  // One latency histogram per opcode, each holding every request once.
  std::map<int64_t, int64_t> in_histograms;
  for (const auto &row : rows_of(objects, "latency")) {
    int64_t total = 0;
    for (const auto &b : row["buckets"])
      total += b["count"].get<int64_t>();
    in_histograms[row["opcode"].get<int64_t>()] = total;
  }
  EXPECT_EQ(in_histograms, expected) << r;
}

TEST_F(E2eAggregations, JsonOutputIsOneObjectPerLine) {
  auto r = run(mt({"-f", "json", "-c", workload("uring_mix") + " 4 2 2 1", script("opcodes.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto objects = json_lines(r.out);
  std::vector<std::string> types;
  for (const auto &o : objects)
    types.push_back(o["type"].get<std::string>());
  EXPECT_EQ(types,
            (std::vector<std::string>{"attached_probes", "map", "map", "hist", "lost_events"}))
      << r;
  EXPECT_EQ(objects.front()["data"]["probes"], 3) << r;
  EXPECT_EQ(rows_of(objects, "latency")[0]["buckets"][0].count("min"), 1u) << r;
  EXPECT_EQ(objects.back()["data"]["lost"], 0) << r;
}

TEST_F(E2eAggregations, JsonCarriesEventsAndPrints) {
  TempDir dir;
  std::string path = dir.write("events.lua", R"(
probe("tracepoint:io_uring:io_uring_complete", { capture = { "args.user_data", "comm" } })
probe("end", function() print("done\t\"quoted\"") end)
)");
  auto r = run(mt({"-f", "json", "-c", workload("nop_storm") + " 5", path}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto objects = json_lines(r.out);
  std::vector<uint64_t> user_data;
  for (const auto &o : objects)
    if (o["type"] == "event") {
      EXPECT_EQ(o["probe"], "tracepoint:io_uring:io_uring_complete") << r;
      EXPECT_EQ(o["data"]["comm"], "nop_storm") << r;
      user_data.push_back(o["data"]["user_data"].get<uint64_t>());
    }
  std::sort(user_data.begin(), user_data.end());
  EXPECT_EQ(user_data, sequence(1, 5)) << r;
  ASSERT_GE(objects.size(), 2u) << r;
  EXPECT_EQ(objects[objects.size() - 2]["data"], "done\t\"quoted\"\n") << r;
  EXPECT_EQ(objects.back()["data"]["events"], 5) << r;
}

TEST_F(E2eAggregations, StatsMinMaxAndHistogramsOfKnownBatchSizes) {
  // One io_uring_enter per argument, with to_submit equal to it: 1..10.
  auto r = run(
      mt({"-v", "-c", workload("uring_batches") + " 1 2 3 4 5 6 7 8 9 10", script("batches.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  // Timed by thread (in task storage where the kernel has it), every call matched.
  EXPECT_TRUE(contains(r.err,
                       "latency 'latency1': 10 starts, 0 restarts, 10 matched, 0 unmatched stops, "
                       "0 pending, 0 evicted, 0 dropped"))
      << r;
  for (const char *line : {"@stats: COUNT 10, AVG 5, TOTAL 55, MIN 1, MAX 10", "@sum: 55",
                           "@min: 1", "@max: 10", "@avg: 5", "@calls: 10", "@timed_calls: 10"})
    EXPECT_TRUE(contains(r.out, line)) << line << "\n" << r;
  // log2 slots: {1}, {2,3}, {4..7}, {8..10}; the fullest gets 40 stars.
  EXPECT_TRUE(contains(r.out, "         0 -> 1          : 1        |**********"));
  EXPECT_TRUE(contains(r.out, "         2 -> 3          : 2        |********************"));
  EXPECT_TRUE(
      contains(r.out, "         4 -> 7          : 4        |" + std::string(40, '*') + "|"));
  EXPECT_TRUE(contains(r.out, "         8 -> 15         : 3        |" + std::string(30, '*')));
  // Linear, 0..10 step 5: {1..4}, {5..9}, {10}.
  EXPECT_TRUE(contains(r.out, "        0          : 4        |")) << r;
  EXPECT_TRUE(contains(r.out, "        5          : 5        |")) << r;
  EXPECT_TRUE(contains(r.out, "        >= 10      : 1        |")) << r;
}

// A pair on tracepoints every syscall fires, guarded: only the 10 calls
// start, and every stop that did not start is turned away by its guard,
// not counted as an unmatched stop.
TEST_F(E2eAggregations, GuardedLatencyOnTheRawSyscallTracepoints) {
  auto r = run(mt(
      {"-v", "-c", workload("uring_batches") + " 1 2 3 4 5 6 7 8 9 10", script("raw_enter.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err,
                       "latency 'latency1': 10 starts, 0 restarts, 10 matched, 0 unmatched stops, "
                       "0 pending, 0 evicted, 0 dropped"))
      << r;
  EXPECT_TRUE(contains(r.out, "@submitted: 55")) << r;
}

TEST_F(E2eAggregations, AMillionEventsIntoACountLoseNothing) {
  auto r = run(mt({"-c", workload("nop_storm") + " 1000000 32", script("million.lua")}), 90s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "@all: 1000000\n")) << r;
  EXPECT_TRUE(contains(r.out, "nop_storm  1000000\n")) << r;
  EXPECT_TRUE(contains(r.err, "0 lost")) << r;
  EXPECT_FALSE(contains(r.err, "dropped")) << r;
}

TEST_F(E2eAggregations, BlockLatencyHistogramHoldsEveryDirectWrite) {
  LoopDevice loop;
  Process tracer(
      mt({"-f", "json", script("block_latency.lua"), "--dev", std::to_string(loop.dev())}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
  auto writes = run(direct_writes(loop.path(), 100, 4096));
  ASSERT_EQ(writes.exit_code, 0) << writes;
  // Completions are counted when they happen: wait for all 100 to be done.
  for (int i = 0; i < 50 && loop.writes_completed() < 100; i++)
    std::this_thread::sleep_for(20ms);
  tracer.signal(SIGINT);
  auto r = tracer.wait();
  ASSERT_EQ(r.exit_code, 0) << r;
  auto objects = json_lines(r.out);
  int64_t total = 0;
  for (const auto &row : rows_of(objects, "latency")) {
    EXPECT_EQ(row["rwbs"].get<std::string>().substr(0, 1), "W") << r;
    total += row["count"].get<int64_t>();
  }
  EXPECT_EQ(total, 100) << r;
  EXPECT_EQ(rows_of(objects, "bytes")[0]["value"], 100 * 4096) << r;
  EXPECT_FALSE(contains(r.err, "evicted")) << r;
}

TEST_F(E2eAggregations, UnmatchedLatencyStartsStayWithinTheMapSize) {
  // Another process's completions, all through the run, are not the
  // target's unmatched stops.
  Process other(Command{{workload("nop_storm"), "10s", "16"}});
  auto r = run(mt({"-v", "-c", workload("nop_storm") + " 2000 16", script("evictions.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  // "latency 'unmatched': S starts, R restarts, M matched, U unmatched stops, P pending, E evicted"
  auto at = r.err.find("latency 'unmatched': ");
  ASSERT_NE(at, std::string::npos) << r;
  unsigned long long starts, restarts, matched, unmatched, pending, evicted;
  ASSERT_EQ(std::sscanf(r.err.c_str() + at,
                        "latency 'unmatched': %llu starts, %llu restarts, %llu matched, %llu "
                        "unmatched stops, %llu pending, %llu evicted",
                        &starts, &restarts, &matched, &unmatched, &pending, &evicted),
            6)
      << r;
  EXPECT_EQ(starts + restarts, 2000u) << r;
  EXPECT_EQ(matched, 0u) << r;
  EXPECT_EQ(unmatched, 2000u) << r;
  EXPECT_LE(pending, 64u) << r;
  EXPECT_EQ(evicted, starts - pending) << r;
  EXPECT_GT(evicted, 1000u) << r;
}

// A thread's start still running when tracing stops is pending, not
// evicted, in task storage as in an LRU map.
TEST_F(E2eAggregations, ThreadKeyedStartStillRunningAtTheEndIsPending) {
  auto r = run(mt({"-v", "--duration", "1", "-c", "sleep 5", script("sleeps.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err,
                       "latency 'sleeps': 1 starts, 0 restarts, 0 matched, 0 unmatched stops, "
                       "1 pending, 0 evicted, 0 dropped"))
      << r;
  EXPECT_TRUE(contains(r.out, "@slept: 0")) << r;
}

TEST_F(E2eAggregations, ScriptMapIsWrittenInTheKernelAndReadFromLua) {
  auto r = run(mt(
      {"-c", "sh -c '" + workload("nop_storm") + " 1000; sleep 0.3'", script("script_map.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "completions"), std::vector<uint64_t>{1000}) << r;
  EXPECT_EQ(values_of(r.out, "get"), std::vector<uint64_t>{1000}) << r;
  EXPECT_TRUE(contains(r.out, "per_cpu_sum=1000 pending_left=0")) << r;
  EXPECT_TRUE(contains(r.out, "mark=-5 missing=nil")) << r;
  EXPECT_TRUE(contains(r.out, "interval_reads_ok=true")) << r;
  // print = true: shown at exit, after the end handler's set().
  EXPECT_TRUE(contains(r.out, "@per_pid:\n  [")) << r;
  EXPECT_TRUE(contains(r.out, "]: 7\n")) << r;
}

TEST_F(E2eAggregations, LatencyPairSendsEachRequestToTheHandler) {
  auto r = run(mt({"-c", workload("uring_mix") + " 10 4 0 0", script("latency_events.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 14)) << r;
  auto ops = values_of(r.out, "op");
  EXPECT_EQ(std::count(ops.begin(), ops.end(), 0u), 10) << r;  // NOP
  EXPECT_EQ(std::count(ops.begin(), ops.end(), 22u), 4) << r;  // READ
  EXPECT_EQ(lines(r.out).size(), 14u) << r;
  EXPECT_FALSE(contains(r.out, "positive=false")) << r;
}

TEST_F(E2eAggregations, IntervalPrintsAndClears) {
  auto r = run(mt({"-c", "sh -c '" + workload("nop_storm") + " 300; sleep 0.35'",
                   script("interval_print.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  uint64_t total = 0;
  size_t prints = 0;
  for (const auto &line : lines(r.out))
    if (line.rfind("@completions: ", 0) == 0) {
      prints++;
      total += std::stoull(line.substr(14));
    }
  EXPECT_GE(prints, 3u) << r;
  EXPECT_EQ(total, 300u) << r;  // cleared after each print: nothing counted twice
}

}  // namespace
}  // namespace e2e
