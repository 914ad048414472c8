// The Lua API for maps, aggregations and latency pairs: what declaration a
// script builds, and which scripts are refused (at their line).
#include <gtest/gtest.h>

#include "common/error.h"
#include "output/output.h"
#include "script/lua_script.h"
#include "script/script_params.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

using Loaded = testing::LoadedScript;

// The declaration `text` builds.
Declaration declare(const std::string &text) {
  Loaded l(text);
  l.script.declare();
  return l.script.declaration();
}

// The message declaring `text` fails with; fails the test if it succeeds.
std::string error_of(const std::string &text) {
  Loaded l(text);
  try {
    l.script.declare();
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error from: " << text;
  return "";
}

std::vector<std::string> key_names(const AggregationDecl &a) {
  std::vector<std::string> names;
  for (const auto &k : a.keys)
    names.push_back(k.name);
  return names;
}

#define EXPECT_STARTS_WITH(text, prefix) EXPECT_EQ((text).rfind(prefix, 0), 0u) << (text)
#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// The error declaring `text` raises, which must name line `line` of it.
std::string error_at(const std::string &text, int line) {
  std::string e = error_of(text);
  EXPECT_STARTS_WITH(e, "t.lua:" + std::to_string(line) + ":");
  return e;
}

}  // namespace

TEST(LuaAggregations, KeysPutArrayEntriesFirstThenNamedOnesSorted) {
  Declaration d = declare(
      R"(local c = count{ name = "io", by = { "comm", "args.x", disk = "args.dev", cpu_id = "cpu" } })");
  ASSERT_EQ(d.aggregations.size(), 1u);
  const AggregationDecl &a = d.aggregations[0];
  EXPECT_EQ(a.name, "io");
  EXPECT_EQ(a.kind, AggKind::Count);
  EXPECT_EQ(a.id, 0);
  EXPECT_EQ(a.where.line, 1);
  EXPECT_EQ(key_names(a), (std::vector<std::string>{"comm", "x", "cpu_id", "disk"}));
  EXPECT_EQ(a.keys[0].expr.text, "comm");
  EXPECT_EQ(a.keys[1].expr.text, "args.x");
  EXPECT_EQ(a.keys[2].expr.text, "cpu");
  EXPECT_EQ(a.keys[3].expr.text, "args.dev");
  EXPECT_TRUE(a.value.text.empty());
  EXPECT_TRUE(a.print_at_exit);
}

TEST(LuaAggregations, KeyMayBeASingleExpression) {
  Declaration d = declare(
      "hist{ value = \"args.len\", by = \"args.dev\" }\n"
      "count{ by = { name = \"str(args.name, 32)\" } }\n");
  EXPECT_EQ(key_names(d.aggregations[0]), (std::vector<std::string>{"dev"}));
  const Capture &name = d.aggregations[1].keys[0];
  EXPECT_TRUE(name.is_string);
  EXPECT_EQ(name.string_size, 32);
  EXPECT_EQ(name.expr.text, "args.name");
}

TEST(LuaAggregations, DefaultNamesNumberEachKind) {
  Declaration d = declare(
      "count{}\ncount()\nhist{ value = \"args.x\" }\ncount{}\nsum{ value = \"args.x\" }\n"
      "lhist{ value = \"args.x\", min = 0, max = 10, step = 1 }\nstats{ value = \"args.x\" }\n");
  std::vector<std::string> names;
  for (const auto &a : d.aggregations)
    names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"count", "count2", "hist", "count3", "sum", "lhist",
                                             "stats"}));
  for (size_t i = 0; i < d.aggregations.size(); i++)
    EXPECT_EQ(d.aggregations[i].id, static_cast<int>(i));
  EXPECT_EQ(d.aggregations[2].kind, AggKind::Log2Hist);
  EXPECT_EQ(d.aggregations[5].kind, AggKind::LinearHist);
  EXPECT_EQ(d.aggregations[6].kind, AggKind::Stats);
}

TEST(LuaAggregations, OptionsReachTheDeclaration) {
  Declaration d = declare(
      "local h = hist{ name = \"lat\", value = \"args.ns\", unit = \"us\", size = 64, print = "
      "false "
      "}\n");
  const AggregationDecl &a = d.aggregations[0];
  EXPECT_EQ(a.value.text, "args.ns");
  EXPECT_EQ(a.value.where.line, 1);
  EXPECT_EQ(a.unit, "us");
  EXPECT_EQ(a.size, 64u);
  EXPECT_FALSE(a.print_at_exit);
}

TEST(LuaAggregations, ProbesFeedOneOrSeveralAggregations) {
  Declaration d = declare(R"(local c = count{}
local h = hist{ value = "args.len" }
probe("tracepoint:a:b", { aggregate = c })
probe("tracepoint:a:c", { aggregate = { c, h }, action = "map_add(m, 1, 2);" })
)");
  ASSERT_EQ(d.probes.size(), 2u);
  EXPECT_EQ(d.probes[0].aggregations, (std::vector<int>{0}));
  EXPECT_EQ(d.probes[1].aggregations, (std::vector<int>{0, 1}));
  EXPECT_EQ(d.probes[1].action.text, "map_add(m, 1, 2);");
  EXPECT_EQ(d.probes[1].action.where.line, 4);
  EXPECT_FALSE(d.probes[0].has_handler);
}

TEST(LuaAggregations, AggregateRejectsOtherValues) {
  error_at("probe(\"tracepoint:a:b\", { aggregate = { 1 } })\n", 1);
  EXPECT_CONTAINS(error_of("probe(\"tracepoint:a:b\", { aggregate = \"count\" })\n"),
                  "'aggregate' must be an aggregation");
}

TEST(LuaAggregations, LinearHistogramKeepsItsRange) {
  Declaration d = declare("lhist{ value = \"args.x\", min = -10, max = 90, step = 20 }\n");
  const AggregationDecl &a = d.aggregations[0];
  EXPECT_EQ(a.lmin, -10);
  EXPECT_EQ(a.lmax, 90);
  EXPECT_EQ(a.lstep, 20);
}

TEST(LuaAggregations, LinearHistogramRefusesAZeroStep) {
  std::string e = error_at("\nlhist{ value = \"args.x\", min = 0, max = 10, step = 0 }\n", 2);
  EXPECT_CONTAINS(e, "lhist 'lhist'");
  EXPECT_CONTAINS(e, "0 < step");
}

TEST(LuaAggregations, LinearHistogramRefusesMinNotBelowMax) {
  for (const char *range : {"min = 10, max = 10", "min = 10, max = 5"}) {
    std::string e = error_at("local x = 1\n\nlhist{ name = \"r\", value = \"args.x\", " +
                                 std::string(range) + ", step = 1 }\n",
                             3);
    EXPECT_CONTAINS(e, "lhist 'r'");
    EXPECT_CONTAINS(e, "min < max");
  }
}

TEST(LuaAggregations, LinearHistogramNeedsIntegerBoundsAndFewSteps) {
  EXPECT_CONTAINS(error_of("lhist{ value = \"x\", min = 0, max = 10 }"), "needs an integer step");
  EXPECT_CONTAINS(error_of("lhist{ value = \"x\", min = 0.5, max = 10, step = 1 }"),
                  "needs an integer min");
  EXPECT_CONTAINS(error_of("lhist{ value = \"x\", min = 0, max = 1001, step = 1 }"),
                  "at most 1000 steps");
  EXPECT_NO_THROW(declare("lhist{ value = \"x\", min = 0, max = 1000, step = 1 }"));
}

TEST(LuaAggregations, CountTakesNoValue) {
  std::string e = error_at("\n\ncount{ value = \"args.len\" }\n", 3);
  EXPECT_CONTAINS(e, "count 'count' takes no value");
}

TEST(LuaAggregations, KeysMayNotHideValueNames) {
  std::string e = error_at("sum{ value = \"args.x\", by = { value = \"args.y\" } }\n", 1);
  EXPECT_CONTAINS(e, "key 'value'");
  EXPECT_CONTAINS(error_of("hist{ value = \"args.x\", by = \"args.buckets\" }"), "key 'buckets'");
}

TEST(LuaAggregations, NamesAreUnique) {
  std::string e = error_at("count{ name = \"n\" }\nsum{ name = \"n\", value = \"args.x\" }\n", 2);
  EXPECT_CONTAINS(e, "'n' is declared twice");
}

TEST(LuaAggregations, LatencyMakesAStartAndAStopProbe) {
  Declaration d = declare(R"(probe("begin", function() end)
local h = hist{ name = "lat", unit = "us" }
latency({ start = "tracepoint:block:block_rq_issue",
          stop = { "tracepoint:block:block_rq_complete", "tracepoint:block:block_io_done" },
          key = "tid", into = h, filter = "pid == 1", stop_filter = "args.error == 0",
          guard = "args.nr_sector", stop_guard = "args.error != 1", size = 100 },
        function(ev) end)
)");
  ASSERT_EQ(d.probes.size(), 3u);
  ASSERT_EQ(d.latencies.size(), 1u);
  const LatencyDecl &lat = d.latencies[0];
  EXPECT_EQ(lat.id, 0);
  EXPECT_EQ(lat.name, "latency1");
  EXPECT_EQ(lat.start_probe, 1);
  EXPECT_EQ(lat.stop_probe, 2);
  EXPECT_EQ(lat.size, 100u);
  ASSERT_EQ(lat.key.size(), 1u);
  EXPECT_EQ(lat.key[0].name, "tid");
  EXPECT_EQ(lat.key[0].expr.text, "tid");

  const ProbeDecl &start = d.probes[1], &stop = d.probes[2];
  EXPECT_EQ(start.id, 1);
  EXPECT_EQ(stop.id, 2);
  EXPECT_EQ(start.alternatives, (std::vector<std::string>{"tracepoint:block:block_rq_issue"}));
  EXPECT_EQ(stop.alternatives, (std::vector<std::string>{"tracepoint:block:block_rq_complete",
                                                         "tracepoint:block:block_io_done"}));
  EXPECT_EQ(start.latency_start, 0);
  EXPECT_EQ(start.latency_stop, -1);
  EXPECT_EQ(stop.latency_stop, 0);
  EXPECT_EQ(stop.latency_start, -1);
  EXPECT_EQ(start.predicate.text, "pid == 1");
  EXPECT_EQ(stop.predicate.text, "args.error == 0");
  EXPECT_EQ(start.guard.text, "args.nr_sector");
  EXPECT_EQ(stop.guard.text, "args.error != 1");
  EXPECT_TRUE(start.aggregations.empty());
  EXPECT_EQ(stop.aggregations, (std::vector<int>{0}));
  EXPECT_EQ(start.where.line, 3);
}

TEST(LuaAggregations, LatencyHandlerBelongsToTheStopProbe) {
  Loaded l(R"(probe("begin", function() end)
latency({ start = "tracepoint:a:b", stop = "tracepoint:a:c", key = { "tid", "args.req" } },
        function(ev) end)
)");
  l.script.declare();
  const Declaration &d = l.script.declaration();
  ASSERT_EQ(d.probes.size(), 3u);
  EXPECT_FALSE(d.probes[1].has_handler);
  EXPECT_TRUE(d.probes[2].has_handler);
  EXPECT_FALSE(l.script.has_handler(1));
  EXPECT_TRUE(l.script.has_handler(2));
  EXPECT_TRUE(l.script.has_handler(0));
  std::vector<std::string> keys;
  for (const auto &k : d.latencies[0].key)
    keys.push_back(k.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"tid", "req"}));
}

TEST(LuaAggregations, LatencyStopKeyNamesTheSameFields) {
  Declaration d = declare(
      R"(latency{ start = "kprobe:f", stop = "tp_btf:g", key = { rq = "(__u64)args.rq" },
          stop_key = { rq = "(__u64)args.arg0" }, into = count{} })");
  ASSERT_EQ(d.latencies[0].stop_key.size(), 1u);
  EXPECT_EQ(d.latencies[0].stop_key[0].name, "rq");
  EXPECT_EQ(d.latencies[0].stop_key[0].expr.text, "(__u64)args.arg0");
  std::string e = error_at(
      "\nlatency{ start = 'tracepoint:a:b', stop = 'tracepoint:a:c', key = 'tid', stop_key = "
      "{ other = 'tid' }, into = count{} }",
      2);
  EXPECT_CONTAINS(e, "stop_key must name the same fields as key");
}

TEST(LuaAggregations, LatencyCarriesValuesFromStartToStop) {
  Declaration d = declare(
      R"(latency{ start = "tracepoint:a:b", stop = "tracepoint:a:c", key = "args.req",
          carry = { "args.len", op = "args.opcode" }, into = count{ by = { op = "start.op" } } })");
  ASSERT_EQ(d.latencies.size(), 1u);
  const auto &carry = d.latencies[0].carry;
  ASSERT_EQ(carry.size(), 2u);
  EXPECT_EQ(carry[0].name, "len");
  EXPECT_EQ(carry[0].expr.text, "args.len");
  EXPECT_EQ(carry[1].name, "op");
  EXPECT_EQ(carry[1].expr.text, "args.opcode");
  EXPECT_EQ(d.aggregations[0].keys[0].expr.text, "start.op");
  EXPECT_EQ(d.probes[1].aggregations, (std::vector<int>{0}));
}

TEST(LuaAggregations, LatencyMayOnlyCapture) {
  Declaration d = declare(
      R"(latency{ name = "rq", start = "tracepoint:a:b", stop = "tracepoint:a:c", key = "tid",
          capture = { ns = "latency" } })");
  ASSERT_EQ(d.probes.size(), 2u);
  EXPECT_EQ(d.latencies[0].name, "rq");
  ASSERT_EQ(d.probes[1].captures.size(), 1u);
  EXPECT_EQ(d.probes[1].captures[0].name, "ns");
  EXPECT_TRUE(d.probes[0].captures.empty());
}

TEST(LuaAggregations, LatencyThatGoesNowhereIsRefused) {
  std::string e = error_at(
      "local x = 1\nlatency{ start = \"tracepoint:a:b\", stop = \"tracepoint:a:c\", key = \"tid\" "
      "}\n",
      2);
  EXPECT_CONTAINS(e, "latency 'latency1' goes nowhere");
}

TEST(LuaAggregations, LatencyNeedsAKeyAndBothProbes) {
  EXPECT_CONTAINS(
      error_at("latency{ start = \"tracepoint:a:b\", stop = \"tracepoint:a:c\", into = hist{} }\n",
               1),
      "needs key");
  EXPECT_CONTAINS(error_of("latency{ stop = \"tracepoint:a:c\", key = \"tid\", into = hist{} }"),
                  "latency 'start'");
  EXPECT_CONTAINS(error_of("latency{ start = \"tracepoint:a:c\", key = \"tid\", into = hist{} }"),
                  "latency 'stop'");
}

TEST(LuaAggregations, FailedLatencyLeavesNoProbes) {
  Loaded l(
      "pcall(latency, { start = \"tracepoint:a:b\", stop = \"tracepoint:a:c\", key = \"tid\" })\n");
  l.script.declare();
  EXPECT_TRUE(l.script.declaration().probes.empty());
  EXPECT_TRUE(l.script.declaration().latencies.empty());
}

TEST(LuaMaps, StructKeyFieldsAreSortedByName) {
  Declaration d = declare(
      "\nlocal m = map{ name = \"inflight\", type = \"lru_hash\", key = { sector = \"u64\", dev = "
      "\"u32\" }, value = \"u64\", size = 100, print = true }\n");
  ASSERT_EQ(d.maps.size(), 1u);
  const MapDecl &m = d.maps[0];
  EXPECT_EQ(m.name, "inflight");
  EXPECT_EQ(m.kind, MapKind::LruHash);
  EXPECT_EQ(m.key_fields,
            (std::vector<std::pair<std::string, std::string>>{{"dev", "u32"}, {"sector", "u64"}}));
  EXPECT_TRUE(m.key_type.text.empty());
  EXPECT_EQ(m.value_type.text, "u64");
  EXPECT_EQ(m.size, 100u);
  EXPECT_TRUE(m.print_at_exit);
  EXPECT_EQ(m.where.line, 2);
}

TEST(LuaMaps, StructValuesHaveFieldsLikeKeys) {
  Declaration d = declare(
      "map{ name = \"reqs\", key = \"u64\", value = { submitted = \"u64\", keep = \"u8\" } }\n");
  const MapDecl &m = d.maps[0];
  EXPECT_EQ(m.value_fields, (std::vector<std::pair<std::string, std::string>>{
                                {"keep", "u8"}, {"submitted", "u64"}}));
  EXPECT_TRUE(m.value_type.text.empty());
  EXPECT_CONTAINS(error_of("map{ name = \"m\", value = {} }\n"), "a value table needs fields");
  EXPECT_CONTAINS(error_of("map{ name = \"m\", value = { 1 } }\n"), "value fields are name = ");
}

TEST(LuaMaps, DefaultsToAHashFromU32ToU64) {
  Declaration d = declare("local m = map{ name = \"seen\" }\nassert(m.name == \"seen\")\n");
  const MapDecl &m = d.maps[0];
  EXPECT_EQ(m.kind, MapKind::Hash);
  EXPECT_EQ(m.key_type.text, "u32");
  EXPECT_EQ(m.value_type.text, "u64");
  EXPECT_EQ(m.size, 10240u);
  EXPECT_FALSE(m.print_at_exit);
}

TEST(LuaMaps, ReservedNamesAreRefused) {
  for (const char *name : {"pid", "comm", "args", "latency", "param", "map_add", "mt_x", "__x",
                           "bpf_x", "struct", "1x", ""}) {
    std::string e = error_at("local x = 1\nmap{ name = \"" + std::string(name) + "\" }\n", 2);
    EXPECT_CONTAINS(e, "map name '" + std::string(name) + "'");
  }
  EXPECT_CONTAINS(error_of("map{}"), "map name ''");
}

TEST(LuaMaps, StartIsReservedLikeLatency) {
  // A latency pair's stop probe declares a local `start` (the carried
  // values) that would hide a map of that name, as `latency` would.
  std::string e = error_at("map{ name = \"start\" }\n", 1);
  EXPECT_CONTAINS(e, "map name 'start'");
}

TEST(LuaMaps, NamesAreUnique) {
  std::string e = error_at("map{ name = \"m\" }\nmap{ name = \"m\" }\n", 2);
  EXPECT_CONTAINS(e, "map 'm' is declared twice");
}

TEST(LuaMaps, TypeMustBeKnown) {
  EXPECT_CONTAINS(error_of("map{ name = \"m\", type = \"ringbuf\" }"), "type must be hash");
}

TEST(LuaMaps, ArraysAreKeyedByU32) {
  EXPECT_NO_THROW(declare("map{ name = \"a\", type = \"array\", size = 4 }"));
  EXPECT_CONTAINS(error_of("map{ name = \"a\", type = \"percpu_array\", key = \"u64\" }"),
                  "array maps are keyed by u32");
  EXPECT_CONTAINS(error_of("map{ name = \"a\", type = \"array\", key = { i = \"u32\" } }"),
                  "array maps are keyed by u32");
}

TEST(LuaMaps, StructKeyFieldsAreNamedTypes) {
  EXPECT_CONTAINS(error_of("map{ name = \"m\", key = { \"u32\" } }"),
                  "key fields are name = \"C type\"");
}

}  // namespace mt
