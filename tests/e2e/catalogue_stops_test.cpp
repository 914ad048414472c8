// Catalogue: stopping, the -c command, and engine options that say when to
// stop or what to trace.
#include <signal.h>

#include "tests/e2e/catalogue.h"
#include "tests/fxt_validator.h"
#include "trace/fxt_reader.h"

namespace e2e {
namespace {

// A probe that never fires: a run of it writes nothing but what it must.
const std::string kIdle = "probe(\"tracepoint:io_uring:io_uring_complete\", { filter = \"0\" })\n";
const std::string kIdleTrace =
    "fxt{ file = \"trace.fxt\" }\n"
    "probe(\"tracepoint:io_uring:io_uring_complete\", { filter = \"0\",\n"
    "  draw = { kind = \"instant\", name = \"never\" } })\n";
const std::string kDuration =
    "moontrace: invalid duration '{}' for --duration: expected seconds, more than 0 and at most "
    "31536000 (a year)";

std::string duration_error(const std::string &value) {
  std::string text = kDuration;
  return text.replace(text.find("{}"), 2, value);
}

Case stopped_by(int sig, const std::string &name) {
  return {
      .name = name,
      .files = {{"idle.lua", kIdle + "probe(\"end\", function() print(\"end ran\") end)\n"}},
      .args = {"-o", "out.txt", "idle.lua"},
      .error = "",
      .exit_code = 0,
      .while_running = [sig](Process &p) { p.signal(sig); },
      .may_write = {"out.txt"},
      .check = [](const Result &,
                  const std::string &dir) { EXPECT_EQ(read_file(dir + "/out.txt"), "end ran\n"); }};
}

Case trace_stopped_by(int sig, const std::string &name) {
  return {.name = name,
          .files = {{"idle.lua", kIdleTrace}},
          .args = {"idle.lua"},
          .error = "moontrace: wrote 0 drawn events (0.0 MB) to trace.fxt",
          .exit_code = 0,
          .while_running = [sig](Process &p) { p.signal(sig); },
          .may_write = {"trace.fxt"},
          .check =
              [](const Result &, const std::string &dir) {
                EXPECT_EQ(mt::testing::perfetto_problems_in_file(dir + "/trace.fxt"),
                          std::vector<std::string>{});
              }};
}

const std::vector<Case> kCases = {
    // Options that take one value, given twice.
    {.name = "CommandGivenTwice",
     .args = {"-c", "true", "-c", "false", "uring"},
     .error = "moontrace: option -c is given twice; give it once"},
    {.name = "OutputGivenTwice",
     .args = {"-o", "a.fxt", "--output", "b.fxt", "uring"},
     .error = "moontrace: option --output is given twice; give it once"},
    {.name = "PidGivenTwice",
     .args = {"-p", "1", "-p", "1", "uring"},
     .error = "moontrace: option -p is given twice; give it once"},
    {.name = "DurationGivenTwice",
     .args = {"--duration", "1", "--duration=2", "uring"},
     .error = "moontrace: option --duration is given twice; give it once"},
    {.name = "FormatGivenTwice",
     .args = {"-f", "json", "-f", "text", "uring"},
     .error = "moontrace: option -f is given twice; give it once"},
    // A command that is no command.
    {.name = "EmptyCommand",
     .args = {"-c", "", "uring"},
     .error = "moontrace: option -c needs a command to run, not ''"},
    {.name = "BlankCommand",
     .args = {"--command", "  ", "uring"},
     .error = "moontrace: option --command needs a command to run, not '  '"},
    {.name = "UnterminatedQuoteInCommand",
     .args = {"-c", "echo 'x", "uring"},
     .error = "moontrace: unterminated quote in command: echo 'x"},
    {.name = "EmptyOutputName",
     .args = {"-o", "", "uring"},
     .error = "moontrace: option -o needs a file name"},
    // Durations that are no durations.
    {.name = "DurationNan", .args = {"--duration", "nan", "uring"}, .error = duration_error("nan")},
    {.name = "DurationInfinite",
     .args = {"--duration", "inf", "uring"},
     .error = duration_error("inf")},
    {.name = "DurationNegative",
     .args = {"--duration", "-1", "uring"},
     .error = duration_error("-1")},
    {.name = "DurationZero", .args = {"--duration", "0", "uring"}, .error = duration_error("0")},
    {.name = "DurationOverAYear",
     .args = {"--duration", "31536001", "uring"},
     .error = duration_error("31536001")},
    {.name = "DurationWithAUnit",
     .args = {"--duration", "5s", "uring"},
     .error = duration_error("5s")},
    {.name = "DurationEmpty", .args = {"--duration", "", "uring"}, .error = duration_error("")},
    {.name = "PidTooLarge",
     .args = {"-p", "99999999999", "uring"},
     .error = "moontrace: invalid pid '99999999999' for -p"},
    // The -c command's end is moontrace's.
    {.name = "CommandExitStatus",
     .files = {{"idle.lua", kIdle}},
     .args = {"-c", "sh -c 'exit 3'", "idle.lua"},
     .error = "moontrace: the command exited with status 3",
     .exit_code = 3},
    {.name = "CommandKilledBySignal",
     .files = {{"idle.lua", kIdle}},
     .args = {"-c", "sh -c 'kill -SEGV $$'", "idle.lua"},
     .error = "moontrace: the command was killed by signal 11 (Segmentation fault)",
     .exit_code = 128 + SIGSEGV},
    {.name = "CommandSucceeds",
     .files = {{"idle.lua", kIdle}},
     .args = {"-c", "true", "idle.lua"},
     .error = "",
     .exit_code = 0},
    // Each stop signal stops cleanly, with the output flushed and end run.
    stopped_by(SIGINT, "SigintStopsCleanly"),
    stopped_by(SIGTERM, "SigtermStopsCleanly"),
    stopped_by(SIGHUP, "SighupStopsCleanly"),
    {.name = "SigtermKeepsJsonLines",
     .files = {{"idle.lua", kIdle + "probe(\"end\", function() print(\"end ran\") end)\n"}},
     .args = {"-f", "json", "-o", "out.json", "idle.lua"},
     .error = "",
     .exit_code = 0,
     .while_running = [](Process &p) { p.signal(SIGTERM); },
     .may_write = {"out.json"},
     .check =
         [](const Result &, const std::string &dir) {
           EXPECT_EQ(
               read_file(dir + "/out.json"),
               "{\"type\":\"attached_probes\",\"data\":{\"probes\":1}}\n"
               "{\"type\":\"printf\",\"data\":\"end ran\\n\"}\n"
               "{\"type\":\"lost_events\",\"data\":{\"events\":0,\"lost\":0,\"probes\":{}}}\n");
         }},
    trace_stopped_by(SIGINT, "SigintKeepsTheTrace"),
    trace_stopped_by(SIGHUP, "SighupKeepsTheTrace"),
    // Lua that never returns does not hold a stop back.
    {.name = "IntervalThatLoopsStopsAtTheDuration",
     .files = {{"loop.lua",
                "probe(\"interval:ms:50\", function() while true do end end)\n"
                "probe(\"end\", function() print(\"end ran\") end)\n"}},
     .args = {"-o", "out.txt", "--duration", "1", "loop.lua"},
     .error = "",
     .exit_code = 0,
     .may_write = {"out.txt"},
     .check = [](const Result &,
                 const std::string &dir) { EXPECT_EQ(read_file(dir + "/out.txt"), "end ran\n"); },
     .timeout_s = 10},
    {.name = "EndHandlerThatLoopsIsCut",
     .files = {{"loop.lua",
                "probe(\"interval:s:1\", function() end)\n"
                "probe(\"end\", function()\n"
                "  while true do pcall(function() while true do end end) end\n"
                "end)\n"}},
     .args = {"--duration", "0.2", "loop.lua"},
     .error = "moontrace: loop.lua:3: the end handler was stopped: still running 1 s after "
              "tracing stopped",
     .timeout_s = 10},
    // Errors in handlers that are not per event end the run like others.
    {.name = "BeginHandlerError",
     .files = {{"b.lua", "probe(\"begin\", function() error(\"no good\") end)\n"}},
     .args = {"b.lua"},
     .error = "moontrace: b.lua:1: no good",
     .timeout_s = 10},
    {.name = "IntervalHandlerError",
     .files = {{"i.lua", "probe(\"interval:ms:20\", function()\n  error(\"tick failed\")\nend)\n"}},
     .args = {"i.lua"},
     .error = "moontrace: i.lua:2: tick failed",
     .timeout_s = 10},
    {.name = "EndHandlerError",
     .files = {{"e.lua", "probe(\"end\", function() local t = nil; return t.x end)\n"}},
     .args = {"--duration", "0.1", "e.lua"},
     .error = "moontrace: e.lua:1: attempt to index a nil value (local 't')",
     .timeout_s = 10},
    {.name = "ScriptExitStopsCleanly",
     .files = {{"x.lua",
                "probe(\"interval:ms:20\", function() exit() end)\n"
                "probe(\"end\", function() print(\"end ran\") end)\n"}},
     .args = {"-o", "out.txt", "x.lua"},
     .error = "",
     .exit_code = 0,
     .may_write = {"out.txt"},
     .check = [](const Result &,
                 const std::string &dir) { EXPECT_EQ(read_file(dir + "/out.txt"), "end ran\n"); },
     .timeout_s = 10},
};

CATALOGUE(Stops, kCases);

}  // namespace
}  // namespace e2e
