// Aggregations, latency pairs and script maps: declaration in, generated C
// out, and that C compiled to a BPF object whose maps libbpf can read.
// Over 500 lines: one test per kind of aggregation and map, sharing one compile fixture.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include "bpf_headers/mt_abi.h"
#include "codegen/c_generator.h"
#include "common/error.h"
#include "compile_in_child.h"
#include "compiler/clang_compiler.h"
#include "kernel/kernel_btf.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

// io_uring_submit_req as kernel 6.18 lays it out.
const char *kSubmitFormat = "name: io_uring_submit_req\nID: 2140\nformat:\n" MT_COMMON_FIELDS
                            R"(	field:void * ctx;	offset:8;	size:8;	signed:0;
	field:void * req;	offset:16;	size:8;	signed:0;
	field:unsigned long long user_data;	offset:24;	size:8;	signed:0;
	field:u8 opcode;	offset:32;	size:1;	signed:0;
	field:unsigned long long flags;	offset:40;	size:8;	signed:0;
	field:bool sq_thread;	offset:48;	size:1;	signed:0;
	field:__data_loc char[] op_str;	offset:52;	size:4;	signed:0;

print fmt: "ring %p", REC->ctx
)";

// The fake kernel with io_uring_submit_req too, to start latency pairs.
class SubmitAndCompleteKernel : public testing::FakeKernel {
 public:
  std::optional<TraceFormat> tracepoint(const std::string &category,
                                        const std::string &event) override {
    if (category != "io_uring" || event != "io_uring_submit_req")
      return FakeKernel::tracepoint(category, event);
    std::optional<TraceFormat> f = parse_trace_format(kSubmitFormat);
    f->category = category;
    return f;
  }
};

constexpr const char *kComplete = "tracepoint:io_uring:io_uring_complete";
constexpr const char *kSubmit = "tracepoint:io_uring:io_uring_submit_req";

Expression at(const std::string &text, int line, int column = 0) {
  return {text, {"agg.lua", line, column}};
}

Capture key(const std::string &name, const std::string &text, int line) {
  return {name, at(text, line)};
}

ProbeDecl probe(int id, const char *name, int line) {
  ProbeDecl p;
  p.id = id;
  p.alternatives = {name};
  p.where = {"agg.lua", line, 0};
  return p;
}

AggregationDecl aggregation(int id, const std::string &name, AggKind kind, int line) {
  AggregationDecl a;
  a.id = id;
  a.name = name;
  a.kind = kind;
  a.where = {"agg.lua", line, 0};
  return a;
}

// Two script maps, five aggregations and a latency pair:
//   probe 0 (complete): count by {comm, res}, lhist and stats of res, and an
//                       action that adds to both maps;
//   probe 1 (submit):   starts the latency pair keyed by tid;
//   probe 2 (complete): stops it, into a hist in microseconds and a count
//                       by the opcode carried from the start.
Declaration full_declaration() {
  Declaration d;
  d.script_path = "agg.lua";

  MapDecl per_pid;
  per_pid.name = "per_pid";
  per_pid.key_type = at("u32", 2, 30);
  per_pid.value_type = at("u64", 2, 44);
  per_pid.where = {"agg.lua", 2, 0};
  d.maps.push_back(per_pid);
  MapDecl per_res;
  per_res.name = "per_res";
  per_res.kind = MapKind::LruHash;
  per_res.key_fields = {{"pid", "u32"}, {"res", "s32"}};
  per_res.value_type = at("u64", 3, 50);
  per_res.size = 512;
  per_res.where = {"agg.lua", 3, 0};
  d.maps.push_back(per_res);
  MapDecl state;
  state.name = "state";
  state.key_type = at("u64", 12, 20);
  state.value_fields = {{"keep", "u8"}, {"submitted", "u64"}};
  state.where = {"agg.lua", 12, 0};
  d.maps.push_back(state);

  AggregationDecl by_comm = aggregation(0, "by_comm", AggKind::Count, 4);
  by_comm.keys = {key("comm", "comm", 4), key("res", "args.res", 4)};
  d.aggregations.push_back(by_comm);
  AggregationDecl lat = aggregation(1, "lat", AggKind::Log2Hist, 5);
  lat.unit = "us";
  d.aggregations.push_back(lat);
  AggregationDecl lin = aggregation(2, "res_lin", AggKind::LinearHist, 6);
  lin.value = at("args.res", 6, 20);
  lin.lmin = -20;
  lin.lmax = 100;
  lin.lstep = 10;
  d.aggregations.push_back(lin);
  AggregationDecl st = aggregation(3, "res_stats", AggKind::Stats, 7);
  st.value = at("args.res", 7, 20);
  d.aggregations.push_back(st);
  AggregationDecl by_op = aggregation(4, "by_op", AggKind::Count, 9);
  by_op.keys = {key("op", "start.op", 9)};
  d.aggregations.push_back(by_op);

  LatencyDecl pair;
  pair.name = "lat";
  pair.start_probe = 1;
  pair.stop_probe = 2;
  pair.key = {key("tid", "tid", 8)};
  pair.carry = {key("op", "args.opcode", 8)};
  pair.size = 4096;
  pair.where = {"agg.lua", 8, 0};
  d.latencies.push_back(pair);

  ProbeDecl counted = probe(0, kComplete, 10);
  counted.predicate = at("args.res >= -100", 10, 12);
  counted.action =
      at("map_add(per_pid, pid, 1); map_add(per_res, map_key(per_res, pid, args.res), 2);", 11, 12);
  counted.aggregations = {0, 2, 3};
  d.probes.push_back(counted);
  ProbeDecl start = probe(1, kSubmit, 8);
  start.predicate = at("args.opcode != 99", 8, 40);
  start.latency_start = 0;
  // A struct value built with map_val, and a capture typed by its cast,
  // which names the action's local.
  start.action =
      at("__u32 depth = 3; map_set(state, (__u64)args.req, "
         "map_val(state, .keep = 1, .submitted = nsecs));",
         13, 12);
  start.captures = {key("depth", "(__u32)depth", 13)};
  d.probes.push_back(start);
  ProbeDecl stop = probe(2, kComplete, 8);
  stop.predicate = at("args.cflags != 77", 8, 70);
  stop.latency_stop = 0;
  stop.aggregations = {1, 4};
  d.probes.push_back(stop);
  return d;
}

GeneratedProgram generate(const Declaration &d) {
  SubmitAndCompleteKernel kernel;
  return testing::generate_on(d, kernel);
}

// The error generate() throws for `d`; fails the test if it throws none.
Error generate_error(const Declaration &d) {
  try {
    generate(d);
  } catch (const Error &e) {
    return e;
  }
  ADD_FAILURE() << "expected an mt::Error";
  return Error("none");
}

bool has(const std::string &source, const std::string &text) {
  return source.find(text) != std::string::npos;
}

// From `start` up to and including the next `end` (empty if absent).
std::string span(const std::string &source, const std::string &start, const std::string &end) {
  size_t b = source.find(start);
  if (b == std::string::npos)
    return "";
  size_t e = source.find(end, b + start.size());
  return e == std::string::npos ? "" : source.substr(b, e + end.size() - b);
}

// A probe's function, from its signature to its closing brace.
std::string program(const GeneratedProgram &p, int index) {
  return span(p.source, "int mt_probe_" + std::to_string(index) + "(", "\n}\n");
}

// Compiles `generated`, rewriting pointer reads in the probes that need it.
CompileResult compile_generated(const GeneratedProgram &generated) {
  CompileOptions options;
  for (const auto &p : generated.probes)
    if (!p.name.has_direct_btf_access())
      options.rewrite_functions.insert(p.program);
  return testing::compile_in_child(generated.source, options);
}

std::string describe(const CompileResult &result) {
  std::string text;
  for (const auto &d : result.diagnostics)
    text += d.message + "\n";
  return text;
}

}  // namespace

TEST(AggregationCodegen, NoAggregationMacrosWithoutAggregations) {
  GeneratedProgram p = testing::generate_complete("1", "args.res");
  EXPECT_FALSE(has(p.source, "MT_NUM_AGGREGATIONS"));
  EXPECT_FALSE(has(p.source, "MT_NUM_LATENCIES"));
  EXPECT_FALSE(has(p.source, "extern __u64 latency;"));
}

TEST(AggregationCodegen, CountsAggregationsAndLatencyPairs) {
  GeneratedProgram p = generate(full_declaration());
  EXPECT_TRUE(has(p.source, "#define MT_NUM_AGGREGATIONS 5\n")) << p.source;
  EXPECT_TRUE(has(p.source, "#define MT_NUM_LATENCIES 1\n"));
  EXPECT_TRUE(has(p.source, "#include \"mt_aggregate.h\""));
}

TEST(AggregationCodegen, KeyStructHasOneMemberPerKey) {
  GeneratedProgram p = generate(full_declaration());
  std::string key = span(p.source, "struct mt_agg_0_key {\n", "};\n");
  ASSERT_FALSE(key.empty()) << p.source;
  EXPECT_TRUE(has(key, ") comm;\n")) << key;
  EXPECT_TRUE(has(key, ") res;\n"));
  EXPECT_TRUE(has(key, "args.res"));
  EXPECT_FALSE(has(key, "__slot"));
  // Keys are typed from the probe's own arguments.
  EXPECT_TRUE(has(key, "#define args __mt_targs_0\n")) << key;
}

TEST(AggregationCodegen, AggregationsArePerCpuHashes) {
  GeneratedProgram p = generate(full_declaration());
  EXPECT_TRUE(has(p.source,
                  "/* count 'by_comm' */\n"
                  "struct mt_agg_0_key {"))
      << p.source;
  EXPECT_TRUE(has(p.source,
                  "struct {\n  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);\n  __uint(max_entries, "
                  "10240);\n  __type(key, struct mt_agg_0_key);\n  __type(value, __u64);\n} "
                  "mt_agg_0 SEC(\".maps\") MT_SHARED;\n"));
  // Histograms lead their key with the slot; unkeyed stats have a dummy key.
  EXPECT_TRUE(has(p.source, "/* hist 'lat' */\nstruct mt_agg_1_key {\n  __u32 __slot;\n};\n"));
  EXPECT_TRUE(has(p.source, "struct mt_agg_2_key {\n  __u32 __slot;\n};\n"));
  EXPECT_TRUE(
      has(p.source, "/* stats 'res_stats' */\nstruct mt_agg_3_key {\n  __u32 __none;\n};\n"));
  EXPECT_TRUE(
      has(p.source, "  __type(value, struct mt_stats);\n} mt_agg_3 SEC(\".maps\") MT_SHARED;\n"));
  EXPECT_TRUE(has(p.source, "  __type(value, __u64);\n} mt_agg_1 SEC(\".maps\") MT_SHARED;\n"));
}

TEST(AggregationCodegen, UpdatesEachAggregationInItsProbe) {
  GeneratedProgram p = generate(full_declaration());
  std::string counted = program(p, 0);
  ASSERT_FALSE(counted.empty()) << p.source;
  EXPECT_TRUE(has(counted, "__builtin_memcpy(__k.comm, comm, sizeof(__k.comm));")) << counted;
  EXPECT_TRUE(has(counted, "  __k.res = (\n"));
  EXPECT_TRUE(has(counted, "mt_agg_add(&mt_agg_0, &__k, 1, 0);"));
  EXPECT_TRUE(has(counted,
                  "__k.__slot = mt_linear_slot(__v, -20LL, 100LL, 10ULL);\n"
                  "  mt_agg_add(&mt_agg_2, &__k, 1, 2);"));
  EXPECT_TRUE(has(counted, "mt_agg_stats(&mt_agg_3, &__k, __v, 3);"));
  EXPECT_TRUE(has(counted,
                  "char comm[16]; __builtin_memset(comm, 0, sizeof(comm)); "
                  "bpf_get_current_comm(comm, sizeof(comm));"));
  // Stats of args.res keep their unit-less values.
  EXPECT_FALSE(has(counted, "mt_scale"));
  // Keys are zeroed, padding included, before they are filled.
  EXPECT_TRUE(has(counted, "struct mt_agg_0_key __k;\n  __builtin_memset(&__k, 0, sizeof(__k));"));
  EXPECT_FALSE(has(counted, "mt_agg_1"));
}

TEST(AggregationCodegen, ValuesSitAtTheirScriptLines) {
  GeneratedProgram p = generate(full_declaration());
  EXPECT_TRUE(has(program(p, 0),
                  "  __s64 __v = (__s64)(\n#line 6 \"agg.lua\"\n                   args.res\n"))
      << program(p, 0);
}

TEST(AggregationCodegen, LatencyPairHasAnLruMapOfStartTimes) {
  GeneratedProgram p = generate(full_declaration());
  std::string key = span(p.source, "struct mt_lat_0_key {\n", "};\n");
  EXPECT_TRUE(has(key, ") tid;\n")) << p.source;
  // The start time leads the value; carried values follow it.
  std::string value = span(p.source, "struct mt_lat_0_val {\n", "};\n");
  EXPECT_EQ(value.rfind("struct mt_lat_0_val {\n  __u64 __start_ns;\n", 0), 0u) << p.source;
  EXPECT_TRUE(has(value, ") op;\n"));
  EXPECT_TRUE(has(value, "args.opcode"));
  EXPECT_TRUE(has(p.source,
                  "struct {\n  __uint(type, BPF_MAP_TYPE_LRU_HASH);\n  __uint(max_entries, "
                  "4096);\n  __type(key, struct mt_lat_0_key);\n  __type(value, struct "
                  "mt_lat_0_val);\n} mt_lat_0 SEC(\".maps\") MT_SHARED;\n"));
  EXPECT_TRUE(has(p.source, "extern __u64 latency;"));
}

// The start comes after the filter and the start's action (which may drop
// the event, and declare locals the carried values name), at the probe's
// one clock read, which the filter passed first.
TEST(AggregationCodegen, StartProbeRecordsAfterItsFilterAndAction) {
  Declaration d = full_declaration();
  d.probes[1].action = {"__u64 seen = 1;", d.probes[1].where};
  GeneratedProgram p = generate(d);
  std::string start = program(p, 1);
  ASSERT_FALSE(start.empty()) << p.source;
  EXPECT_TRUE(has(start, "__u32 tid = (__u32)__pid_tgid;"));
  EXPECT_TRUE(has(start, "__sk.tid = ("));
  size_t now = start.find("__u64 __now = bpf_ktime_get_ns();");
  size_t filter = start.find("args.opcode != 99");
  size_t action = start.find("__u64 seen = 1;");
  size_t carry = start.find("  __sv.op = (\n");
  size_t record = start.find("mt_latency_start(&mt_lat_0, &__sk, &__sv, sizeof(__sv), __now, 0);");
  ASSERT_NE(record, std::string::npos) << start;
  EXPECT_LT(filter, now);
  EXPECT_LT(now, action);
  EXPECT_LT(action, carry);
  EXPECT_LT(carry, record);
  EXPECT_FALSE(has(start, "mt_latency_stop"));
  EXPECT_TRUE(has(start, "if (!mt_is_target_task(__pid_tgid))"));
}

// A guard is tested before anything that costs: the -p/--cgroup check,
// the clock, and a stop's lookup of its start (an event it turns away is
// not a stop at all).
TEST(AggregationCodegen, GuardsComeFirst) {
  Declaration d = full_declaration();
  d.probes[1].guard = at("args.opcode != 98", 8, 50);
  d.probes[2].guard = at("args.cflags != 76", 8, 80);
  GeneratedProgram p = generate(d);
  std::string start = program(p, 1), stop = program(p, 2);
  size_t start_guard = start.find("args.opcode != 98");
  ASSERT_NE(start_guard, std::string::npos) << start;
  EXPECT_LT(start_guard, start.find("bpf_get_current_pid_tgid()")) << start;
  EXPECT_LT(start_guard, start.find("mt_is_target_task(")) << start;
  EXPECT_LT(start_guard, start.find("bpf_ktime_get_ns()")) << start;
  size_t stop_guard = stop.find("args.cflags != 76");
  ASSERT_NE(stop_guard, std::string::npos) << stop;
  EXPECT_LT(stop_guard, stop.find("bpf_ktime_get_ns()")) << stop;
  EXPECT_LT(stop_guard, stop.find("mt_latency_stop(")) << stop;
  EXPECT_LT(stop.find("mt_latency_stop("), stop.find("args.cflags != 77")) << stop;
}

// What is read after the guard (builtins, a pair's start) is refused in
// it, at its script line.
TEST(AggregationCodegen, AGuardNamesNoBuiltin) {
  for (const char *text : {"pid != 1", "nsecs > 5", "start.op == 1"}) {
    Declaration d = full_declaration();
    d.probes[2].guard = at(text, 9, 4);
    Error e = generate_error(d);
    EXPECT_NE(std::string(e.what()).find("a guard is tested before"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.where.line, 9) << text;
  }
  // A struct's tag is no builtin.
  Declaration d = full_declaration();
  d.probes[2].guard = at("(struct pid *)args.cflags != 0", 9, 4);
  EXPECT_TRUE(has(program(generate(d), 2), "(struct pid *)args.cflags != 0"));
}

// A pair keyed by the thread alone, on a kernel whose tracing programs have
// task storage, keeps its starts there: no key to hash, no LRU list. Keyed
// otherwise at either end, it stays in an LRU hash.
TEST(AggregationCodegen, ThreadKeyedPairKeepsItsStartsInTaskStorage) {
  const KernelBtf *btf = KernelBtf::get();
  if (!btf || !btf->has_member("struct", "task_struct", "bpf_storage"))
    GTEST_SKIP() << "no task storage for tracing programs";
  struct BtfKernel : SubmitAndCompleteKernel {
    const KernelBtf *btf() override { return KernelBtf::get(); }
  } kernel;
  Declaration d = full_declaration();
  GeneratedProgram p = testing::generate_on(d, kernel);
  EXPECT_TRUE(has(p.source,
                  "  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);\n  __uint(max_entries, 0);\n"
                  "  __uint(map_flags, BPF_F_NO_PREALLOC);\n  __type(key, int);\n"
                  "  __type(value, struct mt_lat_0_val);\n} mt_lat_0 SEC(\".maps\") MT_SHARED;"))
      << p.source;
  EXPECT_FALSE(has(p.source, "struct mt_lat_0_key")) << p.source;
  EXPECT_TRUE(has(program(p, 1), "mt_latency_start(&mt_lat_0, 0, &__sv, sizeof(__sv), __now, 0);"));
  EXPECT_TRUE(has(program(p, 2), "mt_latency_stop(&mt_lat_0, 0, 0, &start, sizeof(start)"));
  CompileResult compiled = compile_generated(p);
  EXPECT_TRUE(compiled.ok) << describe(compiled);

  d.latencies[0].stop_key = {key("tid", "(__u32)args.res", 8)};
  p = testing::generate_on(d, kernel);
  EXPECT_TRUE(has(p.source, "__uint(type, BPF_MAP_TYPE_LRU_HASH);")) << p.source;
  EXPECT_TRUE(has(program(p, 1), "mt_latency_start(&mt_lat_0, &__sk,")) << p.source;
}

// A stop whose probe names the request otherwise computes the key its way,
// and carried values are copied out whole (arrays included).
TEST(AggregationCodegen, StopKeyAndCarriedCopies) {
  Declaration d = full_declaration();
  d.latencies[0].stop_key = {key("tid", "(__u32)args.res", 8)};
  d.latencies[0].carry.push_back(key("who", "comm", 8));
  d.probes[2].captures.push_back(key("who", "start.who", 8));
  d.probes[2].captures.push_back(key("op", "start.op + 1", 8));
  GeneratedProgram p = generate(d);
  std::string stop = program(p, 2);
  ASSERT_FALSE(stop.empty()) << p.source;
  EXPECT_TRUE(has(stop, "__lk.tid = (\n#line 8 \"agg.lua\"\n(__u32)args.res\n")) << stop;
  EXPECT_FALSE(has(stop, "__lk.tid = (\n#line 8 \"agg.lua\"\ntid\n")) << stop;
  EXPECT_TRUE(has(program(p, 1), "__sk.tid = (\n#line 8 \"agg.lua\"\ntid\n")) << p.source;
  EXPECT_TRUE(has(stop, "__builtin_memcpy(&__r->who, &start.who, sizeof(__r->who));")) << stop;
  EXPECT_TRUE(has(stop, "__r->op = (")) << stop;
}

// -p/-c: the stop runs wherever the request ends (an interrupt, a
// kworker); the start it must match was filtered already.
TEST(AggregationCodegen, StopProbeIsNotFilteredByTheTracedProcesses) {
  GeneratedProgram p = generate(full_declaration());
  std::string stop = program(p, 2);
  ASSERT_FALSE(stop.empty()) << p.source;
  // Both are on io_uring_complete: one program looks the target up for both.
  EXPECT_FALSE(has(stop, "mt_is_target")) << stop;
  EXPECT_FALSE(has(stop, "__target)\n    return 0;")) << stop;
  // It takes the task's ids the program read, or reads them without -p/-c.
  EXPECT_TRUE(has(stop, "__u64 __pid_tgid) {\n")) << stop;
  EXPECT_FALSE(has(stop, "__u64 __pid_tgid =")) << stop;
  EXPECT_TRUE(
      has(stop, "  if (!mt_filter_targets)\n    __pid_tgid = bpf_get_current_pid_tgid();\n"))
      << stop;
  EXPECT_TRUE(has(program(p, 0), "if (!__target)\n    return 0;"));
}

TEST(AggregationCodegen, StopProbeMatchesBeforeItsFilterAndFeedsTheHistogram) {
  GeneratedProgram p = generate(full_declaration());
  std::string stop = program(p, 2);
  ASSERT_FALSE(stop.empty()) << p.source;
  size_t match = stop.find("  if (!mt_latency_stop(&mt_lat_0, &__lk, 0, ");
  ASSERT_NE(match, std::string::npos) << stop;
  EXPECT_TRUE(has(stop, "  __u64 latency;\n"));
  EXPECT_TRUE(has(stop, "&latency))\n    return 0;\n"));
  EXPECT_LT(match, stop.find("args.cflags != 77"));
  // What the start carried is read once the start is found.
  EXPECT_TRUE(has(stop, "struct mt_lat_0_val start;"));
  EXPECT_LT(match, stop.find("  __k.op = (\n"));
  EXPECT_TRUE(has(stop, "mt_agg_add(&mt_agg_4, &__k, 1, 4);"));
  EXPECT_TRUE(has(stop, "__lk.tid = ("));
  // The histogram takes the latency in microseconds.
  size_t value = stop.find("  __s64 __v = (__s64)(\n#line 5 \"agg.lua\"\nlatency\n");
  ASSERT_NE(value, std::string::npos) << stop;
  EXPECT_TRUE(has(stop,
                  "  __v = mt_scale(__v, 1000ULL);\n  __k.__slot = mt_log2_slot(__v);\n"
                  "  mt_agg_add(&mt_agg_1, &__k, 1, 1);"));
  EXPECT_FALSE(has(stop, "mt_latency_start"));
}

TEST(AggregationCodegen, ScriptMapsAreDeclaredWithTheirTypes) {
  GeneratedProgram p = generate(full_declaration());
  std::string per_pid =
      span(p.source, "/* map 'per_pid' (agg.lua:2) */\n", " SEC(\".maps\") MT_SHARED;\n");
  ASSERT_FALSE(per_pid.empty()) << p.source;
  EXPECT_TRUE(has(per_pid, "__uint(type, BPF_MAP_TYPE_HASH);\n  __uint(max_entries, 10240);"));
  // u32 and u64 are spelled as the kernel's __u32 and __u64, at their script columns.
  EXPECT_TRUE(has(per_pid, "#line 2 \"agg.lua\"\n                             __u32\n")) << per_pid;
  EXPECT_TRUE(has(per_pid, "__u64\n"));
  EXPECT_TRUE(has(per_pid, "} per_pid SEC(\".maps\") MT_SHARED;"));

  EXPECT_TRUE(has(p.source,
                  "struct mt_map_per_res_key {\n  __u32 pid;\n  __s32 res;\n} "
                  "__attribute__((packed));\n"));
  std::string per_res =
      span(p.source, "/* map 'per_res' (agg.lua:3) */\n", " SEC(\".maps\") MT_SHARED;\n");
  EXPECT_TRUE(has(per_res, "BPF_MAP_TYPE_LRU_HASH"));
  EXPECT_TRUE(has(per_res, "__uint(max_entries, 512);"));
  EXPECT_TRUE(has(per_res, "__type(key, struct mt_map_per_res_key);"));
}

TEST(AggregationCodegen, StructValuesAreDeclaredFromTheirFields) {
  GeneratedProgram p = generate(full_declaration());
  EXPECT_TRUE(has(p.source, "struct mt_map_state_val {\n  __u8 keep;\n  __u64 submitted;\n};\n"))
      << p.source;
  std::string state =
      span(p.source, "/* map 'state' (agg.lua:12) */\n", " SEC(\".maps\") MT_SHARED;\n");
  EXPECT_TRUE(has(state, "__type(value, struct mt_map_state_val);")) << state;
}

TEST(AggregationCodegen, ACaptureStartingWithACastHasItsType) {
  GeneratedProgram p = generate(full_declaration());
  std::string record = span(p.source, "struct mt_rec_1 {\n", "};\n");
  EXPECT_TRUE(has(record, "  __u32 depth;\n")) << record;
  EXPECT_FALSE(has(record, "typeof")) << record;
}

TEST(AggregationCodegen, ActionRunsWithTheBuiltinsItNames) {
  GeneratedProgram p = generate(full_declaration());
  std::string counted = program(p, 0);
  EXPECT_TRUE(has(counted,
                  "#line 11 \"agg.lua\"\n           map_add(per_pid, pid, 1); map_add(per_res, "
                  "map_key(per_res, pid, args.res), 2);\n"))
      << counted;
  EXPECT_TRUE(has(counted, "__u32 pid = __pid_tgid >> 32;"));
  // The action runs after the filter and before the aggregations.
  EXPECT_LT(counted.find("args.res >= -100"), counted.find("map_add(per_pid"));
  EXPECT_LT(counted.find("map_add(per_pid"), counted.find("mt_agg_add(&mt_agg_0"));
}

TEST(AggregationCodegen, LatencyOutsideAStopProbeIsAnErrorAtItsLine) {
  Declaration d = full_declaration();
  d.aggregations[3].value = at("latency / 2", 7, 20);
  Error e = generate_error(d);
  EXPECT_NE(std::string(e.what()).find("'latency'"), std::string::npos) << e.what();
  EXPECT_EQ(e.where.file, "agg.lua");
  EXPECT_EQ(e.where.line, 7);
  EXPECT_EQ(e.located().rfind("agg.lua:7:", 0), 0u) << e.located();
}

TEST(AggregationCodegen, LatencyInAStartProbeFilterIsAnError) {
  Declaration d = full_declaration();
  d.probes[1].predicate = at("latency > 10", 9, 14);
  Error e = generate_error(d);
  EXPECT_NE(std::string(e.what()).find("stop probe"), std::string::npos) << e.what();
  EXPECT_EQ(e.where.line, 9);
  EXPECT_EQ(e.where.column, 14);
}

TEST(AggregationCodegen, LatencyAsAMemberNameIsNotTheBuiltin) {
  Declaration d = full_declaration();
  d.probes[1].predicate = at("args.latency > 10 || args -> latency", 9);
  EXPECT_NO_THROW(generate(d));
}

TEST(AggregationCodegen, HistogramWithoutValueNeedsALatencyPair) {
  Declaration d = full_declaration();
  d.probes[0].aggregations.push_back(1);  // the latency hist, from a plain probe
  Error e = generate_error(d);
  EXPECT_NE(std::string(e.what()).find("hist 'lat' needs value"), std::string::npos) << e.what();
  EXPECT_EQ(e.where.line, 5);
}

TEST(AggregationCodegen, AggregationNoProbeFeedsIsAnErrorAtItsLine) {
  Declaration d = full_declaration();
  d.probes[0].aggregations = {0, 2};  // stats 'res_stats' is left unfed
  Error e = generate_error(d);
  EXPECT_NE(std::string(e.what()).find("stats 'res_stats'"), std::string::npos) << e.what();
  EXPECT_EQ(e.where.line, 7);
}

TEST(AggregationCodegen, CompilesToABpfObjectWithItsMaps) {
  GeneratedProgram generated = generate(full_declaration());
  CompileResult r = compile_generated(generated);
  ASSERT_TRUE(r.ok) << describe(r) << "\n" << generated.source;
  ASSERT_GT(r.object.size(), 64u);

  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "agg_test");
  struct bpf_object *obj = bpf_object__open_mem(r.object.data(), r.object.size(), &opts);
  ASSERT_NE(obj, nullptr);
  struct Expected {
    const char *name;
    enum bpf_map_type type;
    uint32_t key_size, value_size, max_entries;
  };
  const Expected maps[] = {
      {"mt_agg_0", BPF_MAP_TYPE_PERCPU_HASH, 20, 8, 10240},  // char comm[16], __s32 res
      {"mt_agg_1", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 10240},
      {"mt_agg_2", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 10240},
      {"mt_agg_3", BPF_MAP_TYPE_PERCPU_HASH, 4, 32, 10240},  // struct mt_stats
      {"mt_agg_4", BPF_MAP_TYPE_PERCPU_HASH, 1, 8, 10240},   // __u8 op
      {"mt_agg_full", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 5},
      {"mt_lat_0", BPF_MAP_TYPE_LRU_HASH, 4, 16, 4096},  // start time, __u8 op
      {"mt_latency_counts", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8 * MT_LATENCY_COUNTERS, 1},
      {"per_pid", BPF_MAP_TYPE_HASH, 4, 8, 10240},
      {"per_res", BPF_MAP_TYPE_LRU_HASH, 8, 8, 512},  // packed: no padding
      {"state", BPF_MAP_TYPE_HASH, 8, 16, 10240},     // __u8 keep, __u64 submitted
  };
  for (const auto &m : maps) {
    SCOPED_TRACE(m.name);
    struct bpf_map *map = bpf_object__find_map_by_name(obj, m.name);
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(bpf_map__type(map), m.type);
    EXPECT_EQ(bpf_map__key_size(map), m.key_size);
    EXPECT_EQ(bpf_map__value_size(map), m.value_size);
    EXPECT_EQ(bpf_map__max_entries(map), m.max_entries);
  }
  int programs = 0;
  struct bpf_program *prog;
  bpf_object__for_each_program(prog, obj) {
    programs++;
  }
  // Probes 0 and 2 are both on io_uring_complete: one program runs both;
  // the third hands staged records to the ring when the reader asks.
  EXPECT_EQ(programs, 3);
  EXPECT_NE(bpf_object__find_program_by_name(obj, "mt_flush_stage"), nullptr);
  EXPECT_NE(bpf_object__find_program_by_name(obj, "mt_shared_0"), nullptr);
  EXPECT_NE(bpf_object__find_program_by_name(obj, "mt_probe_1"), nullptr);
  EXPECT_STREQ(bpf_program__section_name(bpf_object__find_program_by_name(obj, "mt_probe_1")),
               "tracepoint/io_uring/io_uring_submit_req");
  bpf_object__close(obj);
}

}  // namespace mt
