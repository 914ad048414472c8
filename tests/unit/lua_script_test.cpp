// The Lua front end: scripts in, declarations, errors at their lines, and stdlib modules out.
#include "script/lua_script.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <lua.hpp>

#include "common/error.h"
#include "output/output.h"
#include "scratch_dir.h"
#include "script/script_params.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

using Loaded = testing::LoadedScript;

}  // namespace

TEST(LuaScript, DeclaresProbesWithLocations) {
  Loaded l(R"(local m = param("min", { type = "int", default = 2, help = "h" })
probe({ "tracepoint:a:b", "tracepoint:c:d" }, {
  filter = "args.x > param.min",
  capture = { y = "args.y", "comm" },
}, function(ev) end)
probe("end", function() end)
)",
           {"--min", "5"});
  l.script.declare();
  const Declaration &d = l.script.declaration();
  ASSERT_EQ(d.probes.size(), 2u);
  const ProbeDecl &p = d.probes[0];
  EXPECT_EQ(p.alternatives, (std::vector<std::string>{"tracepoint:a:b", "tracepoint:c:d"}));
  EXPECT_EQ(p.where.line, 2);
  EXPECT_EQ(p.predicate.where.line, 3);
  EXPECT_EQ(p.predicate.where.column, 13);
  ASSERT_EQ(p.captures.size(), 2u);
  EXPECT_EQ(p.captures[0].name, "comm");
  EXPECT_EQ(p.captures[1].name, "y");
  EXPECT_EQ(p.captures[1].expr.where.line, 4);
  EXPECT_TRUE(p.has_handler);
  ASSERT_EQ(d.params.size(), 1u);
  EXPECT_EQ(d.params[0].value.number, 5);
}

TEST(LuaScript, ParsesStringCaptures) {
  Loaded l(R"lua(probe("kprobe:f", { capture = { name = "str(args.p->name, 32)" } }))lua");
  l.script.declare();
  const Capture &c = l.script.declaration().probes[0].captures[0];
  EXPECT_TRUE(c.is_string);
  EXPECT_EQ(c.string_size, 32);
  EXPECT_EQ(c.expr.text, "args.p->name");
}

TEST(LuaScript, ReportsLuaErrorsWithFileAndLine) {
  Loaded l("local x = 1\nerror('boom')\n");
  try {
    l.script.declare();
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "t.lua:2: boom");
  }
}

// An error a library function raised, or an error value that is no
// string, has no place of its own: it gets the line running then.
TEST(LuaScript, ErrorsWithoutAPlaceGetTheLineRunning) {
  const std::pair<const char *, const char *> cases[] = {
      {"local x = 1\nstring.format('%d', 'x')\n", "t.lua:2: bad argument #2 to 'format'"},
      {"local x = 1\nerror({})\n", "t.lua:2: error object is a table value"},
      {"error(setmetatable({}, {__tostring = function() while true do end end}))\n",
       "t.lua:1: error object is a table value"},
  };
  for (const auto &[text, want] : cases) {
    Loaded l(text);
    try {
      l.script.declare();
      ADD_FAILURE() << text;
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0u) << e.what();
    }
  }
}

TEST(LuaScript, SandboxesUnlessUnsafe) {
  Loaded safe(
      "assert(os == nil and io == nil and load == nil and dofile == nil and debug == nil)\n"
      "assert(package.loadlib == nil)\n");
  EXPECT_NO_THROW(safe.script.declare());
  Loaded unsafe("assert(os.time() > 0 and io.open and load and debug)\n", {}, true);
  EXPECT_NO_THROW(unsafe.script.declare());
}

// require looks where it was told at the start: a script that points
// package.path at a file root can read (a secret, /etc/shadow) gets
// nothing from it.
TEST(LuaScript, SettingPackagePathDoesNotMoveRequire) {
  ScratchDir dir;
  std::ofstream(dir.file("secret.lua")) << "leaked = true\n";
  Loaded l("package.path = '" + dir.path() +
           "/?.lua'\n"
           "local ok, why = pcall(require, 'secret')\n"
           "assert(not ok and leaked == nil, tostring(why))\n");
  EXPECT_NO_THROW(l.script.declare());
}

// Errors the engine throws while a script declares are raised at the
// script's line, and come back as one Error.
TEST(LuaScript, BadParameterValuesAreErrorsAtTheirLine) {
  auto error_of = [](const char *script, std::vector<std::string> args = {}) {
    Loaded l(script, args);
    try {
      l.script.declare();
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("\nparam('n', { type = 'int', default = 'many' })\n"),
            "t.lua:2: parameter 'n': bad default 'many': expected an integer");
  EXPECT_EQ(error_of("param('n', { type = 'uint' })\n", {"--n", "-1"}),
            "t.lua:1: invalid value '-1' for --n: expected a non-negative integer");
  EXPECT_EQ(error_of("param('n', { type = 'float' })\n"),
            "t.lua:1: parameter 'n': type must be int, uint, bool or string");
  EXPECT_EQ(error_of("param('n', { type = 'string', default = 'c', choices = { 'a', 'b' } })\n"),
            "t.lua:1: parameter 'n': bad default 'c': expected one of a, b");
  EXPECT_EQ(error_of("param('n', { type = 'uint', choices = { 0, 4 } })\n", {"--n", "3"}),
            "t.lua:1: invalid value '3' for --n: expected one of 0, 4");
  EXPECT_EQ(error_of("param('n', { type = 'bool', choices = { 'true' } })\n"),
            "t.lua:1: parameter 'n': choices are a list of values, for a non-bool");
  EXPECT_EQ(error_of("param('n', { type = 'int', choices = { 1, 'two' } })\n"),
            "t.lua:1: parameter 'n': choice 'two': expected an integer");
  EXPECT_EQ(error_of("param('n', { type = 'int', choices = 3 })\n"),
            "t.lua:1: parameter 'n': choices are a list of values");
}

TEST(LuaScript, PositionalParametersComeAfterTheOptions) {
  Loaded l(R"(local i = param("interval", { type = "uint", default = 1, positional = true })
local c = param("count", { type = "uint", positional = true })
assert(i == 3 and c == 0)
)",
           {"3"});
  EXPECT_NO_THROW(l.script.declare());
  EXPECT_TRUE(l.script.declaration().params[0].positional);
  Loaded late("param('n', { type = 'int', positional = true })\nparam('x', { type = 'int' })\n");
  try {
    late.script.declare();
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "t.lua:2: parameter 'x': declare options before positional parameters");
  }
  Loaded flag("param('q', { type = 'bool', positional = true })\n");
  EXPECT_THROW(flag.script.declare(), Error);
}

TEST(LuaScript, RequiresBuiltInModules) {
  Loaded l("local fmt = require 'fmt'\nassert(fmt.bytes(1536) == '1.5K')\n");
  EXPECT_NO_THROW(l.script.declare());
}

// C templates fill ${name}s and join their lines into one; a name left
// without a value is an error at the line that filled the template.
TEST(LuaScript, CTemplatesFillNamesAndJoinLines) {
  Loaded l(R"(local c = require("ctemplate").c
local filled = c([[
  if (${test}) {
    x = ${n};
  }
]], { test = "args.x > 1", n = 3 })
assert(filled == "if (args.x > 1) { x = 3; }", filled)
-- A run of whitespace with a newline, wherever it comes from, is one space.
assert(c("${a}\n  ${b}", { a = "A  ", b = "  B" }) == "A B")
assert(c(" \t x  \t y\n", {}) == "x  \t y")
assert(c("${v};", { v = "p\n\n  q " }) == "p q ;")
c("y = ${missing};", {})
)");
  try {
    l.script.declare();
    FAIL() << "a missing name was filled";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "t.lua:12: C template: no value for ${missing}");
  }
}

TEST(LuaScript, QuantilesComeBackFromLogLinearSlots) {
  // Slots as mt_log_linear_slot() numbers them: 0..7 alone, then 8 per power of two.
  Loaded l(R"(local q = require 'quantiles'
local function bounds(s) local lo, hi = q.bounds(s) return lo .. '-' .. hi end
assert(bounds(5) == '5-6')
assert(bounds(8) == '8-9' and bounds(15) == '15-16')
assert(bounds(16) == '16-18' and bounds(23) == '30-32')
assert(bounds(24) == '32-36')
assert(q.value({}, 0.5) == nil)
assert(q.value({[5] = 1}, 0.5) == 5.5)
-- 100 values in [32, 36) and 100 in [64, 72): p50 ends the first slot
local counts = {[24] = 100, [32] = 100}
assert(q.value(counts, 0.5) == 36)
assert(q.value(counts, 0.99) == 64 + 8 * 0.98)
)");
  EXPECT_NO_THROW(l.script.declare());
}

TEST(LuaScript, CounterArgumentsAreNumbersThatMayNameLocals) {
  Loaded l(R"(probe("tracepoint:a:b", { action = "__u32 depth = 2;",
  draw = { { kind = "counter", name = "q", args = { depth = "depth" } },
           { kind = "instant", name = "i", args = { "args.x" } } } }))");
  l.script.declare();
  const ProbeDecl &p = l.script.declaration().probes[0];
  ASSERT_EQ(p.draws.size(), 2u);
  ASSERT_EQ(p.captures.size(), 2u);
  EXPECT_EQ(p.captures[0].name, "depth");
  EXPECT_EQ(p.captures[0].c_type, "__s64");
  EXPECT_EQ(p.captures[1].c_type, "");
}

TEST(LuaScript, DrawWhenIsAByteOfTheRecord) {
  Loaded l(R"(probe("tracepoint:a:b", { action = "__u32 n = 2;",
  draw = { kind = "instant", name = "i", args = { "args.x" }, when = "n > 1" } }))");
  l.script.declare();
  const ProbeDecl &p = l.script.declaration().probes[0];
  ASSERT_EQ(p.draws.size(), 1u);
  EXPECT_EQ(p.draws[0].when, "__d0_when");
  ASSERT_EQ(p.captures.size(), 2u);
  EXPECT_EQ(p.captures[1].name, "__d0_when");
  EXPECT_EQ(p.captures[1].expr.text, "!!(n > 1)");
  EXPECT_EQ(p.captures[1].c_type, "__u8");
  Loaded bad(R"(probe("tracepoint:a:b", { draw = { kind = "instant", name = "i", when = 1 } }))");
  EXPECT_THROW(bad.script.declare(), Error);
}

TEST(LuaScript, DrawNamesAreForItsArguments) {
  Loaded l(R"(probe("tracepoint:a:b", { draw = { kind = "instant", name = "i",
  args = { op = "args.opcode" }, names = { op = { [0] = "NOP", [2] = "WRITEV" } } } }))");
  l.script.declare();
  const DrawDecl &d = l.script.declaration().probes[0].draws[0];
  EXPECT_EQ(d.value_names.at("op"), (std::vector<std::string>{"NOP", "", "WRITEV"}));
  for (const char *names : {"{ other = { 'x' } }", "{ op = 'x' }", "{ op = { [-1] = 'x' } }",
                            "{ op = { 'x', 2 } }", "3"}) {
    Loaded bad(std::string(R"(probe("tracepoint:a:b", { draw = { kind = "instant", name = "i",
  args = { op = "args.opcode" }, names = )") +
               names + " } })");
    EXPECT_THROW(bad.script.declare(), Error) << names;
  }
}

TEST(LuaScript, TracksMayBeNamedByALabelAndGrouped) {
  Loaded l(R"lua(probe("tracepoint:a:b", { draw = { kind = "slice", name = "s",
  track = { label = "str(args.name, 32)", group = "block devices" } } }))lua");
  l.script.declare();
  const ProbeDecl &p = l.script.declaration().probes[0];
  const DrawDecl &d = p.draws[0];
  EXPECT_EQ(d.track, "");
  EXPECT_EQ(d.track_label, "__d0_label");
  EXPECT_EQ(d.track_group, "block devices");
  ASSERT_EQ(p.captures.size(), 1u);
  EXPECT_TRUE(p.captures[0].is_string);
  EXPECT_EQ(p.captures[0].string_size, 32);
  EXPECT_EQ(p.captures[0].expr.text, "args.name");
  Loaded bad(R"(probe("tracepoint:a:b", { draw = { kind = "slice", name = "s",
  track = { group = "block devices" } } }))");
  EXPECT_THROW(bad.script.declare(), Error);
}

TEST(LuaScript, AsyncTracksAreForSlices) {
  Loaded l(
      R"(probe("tracepoint:a:b", { draw = { kind = "slice", name = "s", track = "async" } }))");
  l.script.declare();
  EXPECT_TRUE(l.script.declaration().probes[0].draws[0].async_track);
  Loaded bad(
      R"(probe("tracepoint:a:b", { draw = { kind = "instant", name = "i", track = "async" } }))");
  try {
    bad.script.declare();
    ADD_FAILURE() << "an async instant was declared";
  } catch (const Error &e) {
    EXPECT_NE(e.located().find("track \"async\" is for slices"), std::string::npos) << e.located();
  }
}

// A latency pair's start and stop may have actions, and its start drawings.
TEST(LuaScript, LatencyStartAndStopHaveActionsAndDrawings) {
  Loaded l(R"(latency{ start = "tracepoint:a:b", stop = "tracepoint:a:c", key = "tid",
  start_action = "__u64 ring = 1;", stop_action = "__u64 other = 2;", carry = { ring = "(__u64)ring" },
  start_draw = { kind = "counter", name = "q", args = { r = "ring" } },
  draw = { kind = "slice", name = "s", duration = "latency" } })");
  l.script.declare();
  const auto &probes = l.script.declaration().probes;
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_EQ(probes[0].action.text, "__u64 ring = 1;");
  EXPECT_EQ(probes[1].action.text, "__u64 other = 2;");
  ASSERT_EQ(probes[0].draws.size(), 1u);
  EXPECT_EQ(probes[0].draws[0].name, "q");
  ASSERT_EQ(probes[1].draws.size(), 1u);
  EXPECT_EQ(probes[1].draws[0].name, "s");
}

TEST(LuaScript, ReportWritesJsonDataOrTextOnStderr) {
  std::string path = ::testing::TempDir() + "/report_" + std::to_string(getpid()) + ".json";
  {
    Loaded l(R"(assert(lost() == 0)
report{ type = "summary", text = "not in json\n",
        data = { n = 3, ratio = 0.5, name = "a\"b", ops = { { op = "NOP" }, 2 }, none = {} } })");
    l.output.open(path);
    l.output.set_json(true);
    l.script.declare();
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            R"({"type":"summary","data":{"n":3,"name":"a\"b","none":[],"ops":[{"op":"NOP"},2],)"
            R"("ratio":0.5}})");
  std::remove(path.c_str());
  Loaded counted("assert(lost() == 7)\n");
  counted.script.set_lost_counter([] { return 7; });
  EXPECT_NO_THROW(counted.script.declare());
  Loaded text("report{ text = 'summary\\n' }\n");
  ::testing::internal::CaptureStderr();
  text.script.declare();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "summary\n");
}

// Declaring is for the body: a map declared in a handler had no kernel map
// behind it, and using it crashed.
TEST(LuaScript, DeclaringInAHandlerIsRefusedAtItsLine) {
  for (const char *call :
       {"map{ name = 'late' }", "count{}", "hist{ value = 'pid' }", "probe('end', function() end)",
        "param('late')", "latency{ start = 'begin', stop = 'end', key = 'tid', capture = {} }"}) {
    Loaded l(std::string("probe('begin', function()\n  ") + call + "\nend)\n");
    l.script.declare();
    ASSERT_EQ(l.script.declaration().probes.size(), 1u);
    lua_State *L = l.script.state();
    try {
      l.script.call(0);
      ADD_FAILURE() << call << " was accepted in a handler";
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()).rfind("t.lua:2: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("call it in the script's body, not in a handler"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(l.script.declaration().probes.size(), 1u) << call;
    (void)L;
  }
}

TEST(LuaScript, ReportRefusesTablesThatCannotBeJson) {
  struct Bad {
    const char *data;
    const char *why;
  } bad[] = {
      {"local t = {}; t.t = t", "a table that contains itself (a cycle) cannot be JSON"},
      {"local t = {}; t[1] = { t }", "a table that contains itself (a cycle) cannot be JSON"},
      {"local t = {}; for i = 1, 65 do t = { t } end",
       "a table nested more than 64 deep cannot be JSON"},
      {"local t = { [print] = 1 }", "a table with a key of type function cannot be JSON"}};
  for (const auto &b : bad) {
    Loaded l(std::string(b.data) + "\nreport{ type = 'r', data = t }\n");
    l.output.set_json(true);
    try {
      l.script.declare();
      ADD_FAILURE() << b.data;
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()), std::string("t.lua:2: report 'r': ") + b.why);
    }
  }
  // Shared, not cyclic: the same table twice is written twice; 64 deep is fine.
  std::string path = ::testing::TempDir() + "/shared_" + std::to_string(getpid()) + ".json";
  {
    Loaded l(
        "local s = { 1 }\nlocal deep = {}\nfor i = 1, 63 do deep = { deep } end\n"
        "report{ type = 'r', data = { a = s, b = s } }\nreport{ type = 'd', data = deep }\n");
    l.output.open(path);
    l.output.set_json(true);
    EXPECT_NO_THROW(l.script.declare());
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, R"({"type":"r","data":{"a":[1],"b":[1]}})");
  std::remove(path.c_str());
}

TEST(LuaScript, MemoryPastTheLimitNamesTheLine) {
  ScriptArgs args({});
  Output output;
  SandboxOptions sandbox;
  sandbox.memory_limit = 16 << 20;
  LuaScript script(
      {"m.lua", "local t = {}\nfor i = 1, 100 do\n  t[i] = string.rep('x', 1 << 20) .. i\nend\n"},
      sandbox, args, output);
  try {
    script.declare();
    FAIL() << "16 MiB held 100 MiB";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "m.lua:3: the script needs more than its 16 MiB of Lua memory");
  }
}

TEST(LuaScript, ExpressionsAreAtMost16KiB) {
  Loaded ok("probe('tracepoint:a:b', { filter = string.rep('1', 16384) })\n");
  EXPECT_NO_THROW(ok.script.declare());
  Loaded l("probe('tracepoint:a:b', { filter = string.rep('1', 16385) })\n");
  try {
    l.script.declare();
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("t.lua:1: a C expression of 16385 bytes; at most 16384", 0), 0u)
        << e.what();
  }
}

TEST(LuaScript, PrintKeepsNulBytes) {
  std::string path = ::testing::TempDir() + "/nul_" + std::to_string(getpid()) + ".txt";
  {
    Loaded l("print('a\\0b', 'c')\n");
    l.output.open(path);
    l.script.declare();
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, std::string("a\0b\tc\n", 6));
  std::remove(path.c_str());
}

}  // namespace mt
