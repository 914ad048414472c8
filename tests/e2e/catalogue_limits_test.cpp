// Catalogue: inputs that once crashed moontrace or grew it without bound,
// and the limits that now refuse them with one line naming the place.
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/catalogue.h"
#include "tests/fxt_words.h"

namespace e2e {
namespace {

using namespace mt::testing;

// `text` as one gzip member.
std::string gzipped(const std::string &text) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// How many bytes a gzip stream cut short inflates to before its end.
size_t inflatable(const std::string &gz) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  std::string out(1 << 16, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  int ret;
  do {
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    ret = inflate(&z, Z_NO_FLUSH);
  } while (ret == Z_OK);
  size_t n = z.total_out;
  inflateEnd(&z);
  return n;
}

// A trace of `n` instants, each 6 words at offset 24 + 48 * i.
std::string instants(int n) {
  Words w = Words{kMagic} + record(1, 0, {1000000000});
  for (int i = 0; i < n; i++) {
    Words r = record(4, inl("io") << 32 | inl("tick") << 48,
                     Words{uint64_t(1000 + i), 10, 11} + padded("io") + padded("tick"));
    w.insert(w.end(), r.begin(), r.end());
  }
  return bytes(w);
}

const std::string kManyInstants = instants(2000);
const std::string kManyInstantsGz = gzipped(kManyInstants);
const std::string kCutGz = kManyInstantsGz.substr(0, kManyInstantsGz.size() / 2);

// Every line of the dump is a whole record, and there are `at_least` of them.
std::function<void(const Result &, const std::string &)> shows_records(size_t at_least) {
  return [at_least](const Result &r, const std::string &) {
    auto shown = lines(r.out);
    EXPECT_GE(shown.size(), at_least) << r;
    for (size_t i = 1; i < shown.size(); i++)
      EXPECT_EQ(shown[i], std::to_string(1000 + i - 1) + " instant pid=10 tid=11 io/tick");
  };
}

// Writes `name` in the case's directory as the run is set up: a bomb is
// made only by the case that needs it, not whenever the tests start.
std::function<void(const std::string &)> write_gzipped(std::string name,
                                                       std::function<std::string()> text) {
  return [name, text](const std::string &dir) {
    std::ofstream(dir + "/" + name, std::ios::binary) << gzipped(text());
  };
}

std::string probes_on_one_tracepoint(int n) {
  std::string text;
  for (int i = 0; i < n; i++)
    text += "probe(\"tracepoint:syscalls:sys_enter_getppid\", { filter = \"pid == " +
            std::to_string(i) + "\" })\n";
  return text;
}

std::string long_filter(int terms) {
  std::string filter;
  for (int i = 0; i < terms; i++)
    filter += (i ? " || " : "") + std::string("pid == ") + std::to_string(i);
  return "probe(\"tracepoint:syscalls:sys_enter_getppid\", { filter = \"" + filter + "\" })\n";
}

const std::string kGetppid = "probe(\"tracepoint:syscalls:sys_enter_getppid\", ";

const std::vector<Case> kCases = {
    // Scripts that are not scripts.
    {.name = "DevZeroAsScript",
     .args = {"/dev/zero"},
     .error = "moontrace: '/dev/zero' is a character device, not a script file"},
    {.name = "DevNullAsScript",
     .args = {"/dev/null"},
     .error = "moontrace: '/dev/null' is a character device, not a script file"},
    {.name = "DirectoryAsScript",
     .files = {{"scripts/x.lua", "probe('begin', function() exit() end)\n"}},
     .args = {"scripts"},
     .error = "moontrace: 'scripts' is a directory, not a script file"},
    {.name = "FifoAsScript",
     .args = {"pipe.lua"},
     .error = "moontrace: 'pipe.lua' is a FIFO, not a script file",
     .setup = [](const std::string &dir) { mkfifo((dir + "/pipe.lua").c_str(), 0600); }},
    {.name = "ScriptOver16MiB",
     .files = {{"huge.lua", std::string(16 << 20, ' ') + "\n"}},
     .args = {"huge.lua"},
     .error = "moontrace: script 'huge.lua' is larger than 16 MiB; a script is Lua source"},
    {.name = "EmptyScript",
     .files = {{"empty.lua", ""}},
     .args = {"empty.lua"},
     .error = "moontrace: empty.lua: declares no probe, so there is nothing to trace (see "
              "'Writing a script' in the README)"},
    {.name = "ScriptOfOnlyParameters",
     .files = {{"params.lua", "local n = param('n', { type = 'int', default = 1 })\n"}},
     .args = {"params.lua"},
     .error = "moontrace: params.lua: declares no probe, so there is nothing to trace (see "
              "'Writing a script' in the README)"},

    // Declaring once tracing runs (these crashed with SIGSEGV).
    {.name = "MapDeclaredInHandler",
     .files =
         {{"late.lua",
           "probe('begin', function()\n  local m = map{ name = 'late' }\n  m:set(1, 2)\nend)\n"}},
     .args = {"late.lua"},
     .error = "moontrace: late.lua:2: map{} declares; call it in the script's body, not in a "
              "handler (what the script traces is fixed once it starts)"},
    {.name = "AggregationDeclaredInHandler",
     .files = {{"late.lua", "probe('begin', function()\n  local c = count{}\n  c:print()\nend)\n"}},
     .args = {"late.lua"},
     .error = "moontrace: late.lua:2: count{} declares; call it in the script's body, not in a "
              "handler (what the script traces is fixed once it starts)"},
    {.name = "ProbeDeclaredInHandler",
     .files = {{"late.lua", "probe('begin', function()\n  probe('end', function() end)\nend)\n"}},
     .args = {"late.lua"},
     .error = "moontrace: late.lua:2: probe() declares; call it in the script's body, not in a "
              "handler (what the script traces is fixed once it starts)"},

    // JSON of tables that cannot be JSON (a cycle crashed with SIGSEGV).
    {.name = "ReportOfATableThatContainsItself",
     .files = {{"cycle.lua",
                "local t = {}\nt.self = t\nprobe('begin', function()\n  report{ type = 'x', "
                "data = t }\nend)\n"}},
     .args = {"-f", "json", "cycle.lua"},
     .error = "moontrace: cycle.lua:4: report 'x': a table that contains itself (a cycle) cannot "
              "be JSON"},
    {.name = "ReportNestedTooDeep",
     .files = {{"deep.lua",
                "local t = {}\nfor i = 1, 100 do t = { t } end\nprobe('begin', function()\n  "
                "report{ type = 'x', data = t }\nend)\n"}},
     .args = {"-f", "json", "deep.lua"},
     .error = "moontrace: deep.lua:4: report 'x': a table nested more than 64 deep cannot be "
              "JSON"},
    {.name = "ReportWithATableAsKey",
     .files = {{"key.lua",
                "probe('begin', function()\n  report{ type = 'x', data = { [{}] = 1 } }\nend)\n"}},
     .args = {"-f", "json", "key.lua"},
     .error = "moontrace: key.lua:2: report 'x': a table with a key of type table cannot be JSON"},

    // Lua memory.
    {.name = "LuaMemoryPastItsLimit",
     .files = {{"mem.lua", "local big = {}\nbig[1] = string.rep('x', 2000000000)\n"}},
     .args = {"mem.lua"},
     .error = "moontrace: mem.lua:2: the script needs more than its 1024 MiB of Lua memory"},

    // What the compiler, LLVM and the verifier survive.
    {.name = "FilterOf20000Terms",
     .files = {{"terms.lua", long_filter(20000)}},
     .args = {"terms.lua"},
     .error = "moontrace: terms.lua:1: a C expression of 308886 bytes; at most 16384 are allowed "
              "(to test many values, keep them in a map and use map_has)"},
    {.name = "ThousandProbesOnOneTracepoint",
     .files = {{"many.lua", probes_on_one_tracepoint(1000)}},
     .args = {"many.lua"},
     .error = "moontrace: many.lua:65: tracepoint:syscalls:sys_enter_getppid has 1000 probes; at "
              "most 64 fit in the one program a tracepoint runs (merge them: one probe can test "
              "many values with a map)"},
    {.name = "SixtyFiveProbesOnOneTracepoint",
     .files = {{"many.lua", probes_on_one_tracepoint(65)}},
     .args = {"many.lua"},
     .error = "moontrace: many.lua:65: tracepoint:syscalls:sys_enter_getppid has 65 probes; at "
              "most 64 fit in the one program a tracepoint runs (merge them: one probe can test "
              "many values with a map)"},

    // C mistakes reported where they are.
    {.name = "DivisionByZero",
     .files = {{"div.lua", kGetppid + "{\n  filter = \"pid / 0 > 1\",\n})\n"}},
     .args = {"div.lua"},
     .error = "moontrace: div.lua:2:17: error: division by zero is undefined"},
    {.name = "ErrorInAnExpressionBuiltAtRunTime",
     .files = {{"built.lua",
                "local n = 5\n" + kGetppid + "{ filter = \"pid > \" .. n .. \" && nosuch\" })\n"}},
     .args = {"built.lua"},
     .error = "moontrace: built.lua:2: error: use of undeclared identifier 'nosuch', in the C "
              "expression built there:",
     .check =
         [](const Result &r, const std::string &) {
           auto err = r.err_lines();
           ASSERT_GE(err.size(), 3u) << r;
           EXPECT_EQ(err[1], "  pid > 5 && nosuch");
           EXPECT_EQ(err[2], "             ^");
         }},
    {.name = "ArrayCaptureThatCannotBeAssigned",
     .files = {{"array.lua", kGetppid + "{\n  capture = { x = \"(comm)\" },\n})\n"}},
     .args = {"array.lua"},
     .error = "moontrace: array.lua:1: error: array type 'typeof ((comm))' (aka 'char[16]') is "
              "not assignable (in the C generated for this declaration: check its expressions' "
              "types; -v shows the C)"},
    {.name = "VoidCapture",
     .files = {{"void.lua", kGetppid + "{\n  capture = { x = \"(void)0\" },\n})\n"}},
     .args = {"void.lua"},
     .error = "moontrace: void.lua:1: error: field has incomplete type 'typeof ((void)0)' (aka "
              "'void') (in the C generated for this declaration: check its expressions' types; "
              "-v shows the C)"},

    {.name = "KeyLargerThanTheBpfStack",
     .files = {{"bigkey.lua", "local c = count{ by = { s = \"str((void *)0, 4096)\" } }\n" +
                                  kGetppid + "{ aggregate = c })\n"}},
     .args = {"bigkey.lua"},
     .error = "moontrace: bigkey.lua:2: a probe's keys and values take more than the 512 bytes "
              "of stack BPF allows: use shorter strings (str(ptr, N)) or fewer or smaller keys"},

    // print keeps what it is given.
    {.name = "PrintWithNulBytes",
     .files = {{"nul.lua", "probe('begin', function() print('a\\0b'); exit() end)\n"}},
     .args = {"nul.lua"},
     .exit_code = 0,
     .check = [](const Result &r,
                 const std::string &) { EXPECT_EQ(r.out, std::string("a\0b\n", 4)) << r; }},

    // dump: bounded memory, and what a damaged trace still holds.
    {.name = "DumpGzipBomb",
     .args = {"dump", "bomb.fxt.gz"},
     .error = "moontrace: bomb.fxt.gz: offset 0: not an FXT trace: no magic word "
              "(0x0000000000000000)",
     .setup = write_gzipped("bomb.fxt.gz", [] { return std::string(64 << 20, '\0'); })},
    {.name = "DumpGzipBombAfterAMagicWord",
     .args = {"dump", "bomb.fxt.gz"},
     .error = "moontrace: bomb.fxt.gz: offset 8: record of size 0",
     .setup = write_gzipped("bomb.fxt.gz",
                            [] { return bytes({kMagic}) + std::string(64 << 20, '\0'); })},
    {.name = "DumpTruncatedGzip",
     .files = {{"cut.fxt.gz", kCutGz}},
     .args = {"dump", "cut.fxt.gz"},
     .error = "moontrace: cut.fxt.gz: the gzip stream ends early: the file is cut short (" +
              std::to_string(inflatable(kCutGz)) + " bytes inflated)",
     .check = shows_records((inflatable(kCutGz) - 24) / 48)},
    {.name = "DumpPlainTraceCutInsideARecord",
     .files = {{"cut.fxt", kManyInstants.substr(0, 24 + 48 * 50 + 20)}},
     .args = {"dump", "cut.fxt"},
     .error = "moontrace: cut.fxt: offset 2424: record of 6 words runs past the end of the trace "
              "(20 bytes left)",
     .check = shows_records(51)},
    {.name = "DumpDevZero",
     .args = {"dump", "/dev/zero"},
     .error = "moontrace: /dev/zero: offset 0: not an FXT trace: no magic word "
              "(0x0000000000000000)"},
    {.name = "DumpDirectory",
     .files = {{"traces/a.fxt", ""}},
     .args = {"dump", "traces"},
     .error = "moontrace: cannot read traces: Is a directory"},
};

CATALOGUE(Limits, kCases);

}  // namespace
}  // namespace e2e
