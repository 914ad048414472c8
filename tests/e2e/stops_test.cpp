// Every stop is prompt and keeps what was written: stop signals, a busy
// Lua handler under a storm of events, a stop during the compile, a Lua
// error, SIGKILL; the -c command's end and the -p process's exit.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <tuple>

#include "common/error.h"
#include "tests/e2e/e2e_support.h"
#include "tests/fxt_validator.h"
#include "trace/fxt_reader.h"
#include "trace/gzip_file.h"

namespace e2e {
namespace {

using Clock = std::chrono::steady_clock;

class E2eStops : public BpfTest {};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Sends `sig` to `tracer` and waits for it; `took` is how long it took to exit.
Result stop_and_time(Process &tracer, int sig, double &took) {
  auto signalled = Clock::now();
  tracer.signal(sig);
  Result r = tracer.wait(30s);
  took = seconds_since(signalled);
  return r;
}

// nop_storm submitting NOPs for far longer than any test runs, stopped
// before exec; the test ends it.
Command endless_storm() {
  return {{workload("nop_storm"), "4000000000", "32"}, {}, true};
}

size_t instants_named(const std::string &path, const std::string &name) {
  size_t n = 0;
  for (const auto &rec : mt::read_fxt(read_file(path)))
    n += rec.type == 4 && rec.event_type == 0 && rec.name == name;
  return n;
}

// SIGINT, SIGTERM and SIGHUP each stop a trace of a storm as it runs
// (300,000 NOPs: a stop in their midst, and a trace of tens of MB at
// most) cleanly: exit 0, and the trace, plain or gzipped, is whole and
// imports cleanly.
class E2eStopSignals : public BpfTest,
                       public ::testing::WithParamInterface<std::tuple<int, std::string>> {};

TEST_P(E2eStopSignals, KeepAValidTrace) {
  auto [sig, name] = GetParam();
  TempDir dir;
  Process storm(stopped_nop_storm(300000));
  Process tracer(mt({"-o", dir.file(name), "-p", std::to_string(storm.pid()), "uring"}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  storm.resume();
  std::this_thread::sleep_for(200ms);
  tracer.signal(sig);
  auto r = tracer.wait(20s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, "moontrace: wrote ")) << r;
  auto problems = mt::testing::perfetto_problems_in_file(dir.file(name));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  auto dump = run(mt({"dump", dir.file(name)}));
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_TRUE(contains(dump.out, "submit")) << dump.err;
}

// One test each: the sanitized build takes most of a minute for one.
INSTANTIATE_TEST_SUITE_P(EachSignalPlainAndGzipped, E2eStopSignals,
                         ::testing::Combine(::testing::Values(SIGINT, SIGTERM, SIGHUP),
                                            ::testing::Values(std::string("t.fxt"),
                                                              std::string("t.fxt.gz"))),
                         [](const auto &info) {
                           return std::string(sigabbrev_np(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == "t.fxt" ? "Plain" : "Gzipped");
                         });

// A handler that takes 1 ms per event cannot keep up with a NOP storm: the
// stop still comes on time, the buffered events get 0.5 s, the rest are
// counted as not processed, and end handlers run.
TEST_F(E2eStops, BusyHandlerUnderAStormHonoursDuration) {
  Process storm(endless_storm());
  auto started = Clock::now();
  Process tracer(
      mt({"--duration", "2", script("busy_handler.lua"), "--target", std::to_string(storm.pid())}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  storm.resume();
  auto r = tracer.wait(30s);
  double took = seconds_since(started);
  ASSERT_EQ(r.exit_code, 0) << r;
  std::fprintf(stderr, "[ measured ] --duration 2 took %.2f s from exec to exit\n", took);
  EXPECT_LT(took, 2 + 4.0) << r;  // 2 s, startup, and 1 s at most for the stop; generous
  EXPECT_TRUE(contains(r.err, " not processed")) << r;
  EXPECT_EQ(values_of(r.out, "handled").size(), 1u) << r;
}

TEST_F(E2eStops, BusyHandlerUnderAStormHonoursSigint) {
  Process storm(endless_storm());
  Process tracer(mt({script("busy_handler.lua"), "--target", std::to_string(storm.pid())}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  storm.resume();
  std::this_thread::sleep_for(1500ms);
  double took;
  auto r = stop_and_time(tracer, SIGINT, took);
  ASSERT_EQ(r.exit_code, 0) << r;
  std::fprintf(stderr, "[ measured ] SIGINT to exit: %.2f s\n", took);
  EXPECT_LT(took, 3.0) << r;  // 1 s at most; generous on a shared machine
  EXPECT_TRUE(contains(r.err, " not processed")) << r;
  EXPECT_EQ(values_of(r.out, "handled").size(), 1u) << r;
}

// A handler stuck in a C function of Lua's library (a pattern that
// backtracks for ever) is out of the hook's reach: the watchdog ends the
// run within the second a stop may take, with one line, and the trace as last written.
TEST_F(E2eStops, HandlerStuckInALibraryFunctionIsLeftWithinASecond) {
  TempDir dir;
  std::string stuck = dir.write(
      "stuck.lua",
      "fxt{}\n"
      "probe(\"tracepoint:io_uring:io_uring_complete\", {draw = {kind = \"instant\", name = "
      "\"complete\"}}, function()\n"
      "  string.find(string.rep(\"a\", 100000), \".-.-.-.-b\")\n"
      "end)\n");
  Process storm(stopped_nop_storm(100));
  Process tracer(mt({"-p", std::to_string(storm.pid()), "-o", dir.file("t.fxt"), stuck}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  storm.resume();
  EXPECT_EQ(storm.wait(10s).exit_code, 0);
  std::this_thread::sleep_for(1500ms);
  double took;
  auto r = stop_and_time(tracer, SIGINT, took);
  std::fprintf(stderr, "[ measured ] SIGINT to exit, stuck in string.find: %.2f s\n", took);
  EXPECT_LT(took, 3.0) << r;  // 0.75 s by design; generous on a shared machine
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_EQ(r.err_lines(),
            std::vector<std::string>{"moontrace: the script is stuck in a Lua library function and "
                                     "cannot be stopped; leaving with the output as last written"})
      << r;
  EXPECT_EQ(read_file(dir.file("t.fxt")).size() % 8, 0u);
}

// A finalizer (__gc) runs where the hook cannot reach it, at the latest
// when the script's state is closed at the end: one that never returns
// is left a second or so later, by the watchdog.
TEST_F(E2eStops, AFinalizerThatNeverReturnsIsLeft) {
  TempDir dir;
  std::string script_file =
      dir.write("gc.lua",
                "setmetatable({}, {__gc = function() while true do end end})\n"
                "probe(\"begin\", function() exit() end)\n");
  auto r = run(mt({script_file}), 20s);
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(contains(r.err, "cannot be stopped")) << r;
}

// When the traced work ends by itself, every buffered event is handled,
// however long that takes: only a requested stop is bounded.
TEST_F(E2eStops, EndOfTheCommandHandlesEveryBufferedEvent) {
  auto r = run(mt({"-c", workload("nop_storm") + " 1500", script("busy_handler.lua")}), 60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "handled"), std::vector<uint64_t>{1500}) << r;
  EXPECT_FALSE(contains(r.err, "not processed")) << r;
}

// ... unless a stop signal comes while they are handled: then the rest
// are counted, and moontrace is done within a second.
TEST_F(E2eStops, StopSignalCutsTheHandlingOfWhatTheCommandLeft) {
  Process tracer(mt({"-c", workload("nop_storm") + " 20000", script("busy_handler.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  std::this_thread::sleep_for(2s);  // the storm is over; 20 s of handling are buffered
  double took;
  auto r = stop_and_time(tracer, SIGINT, took);
  ASSERT_EQ(r.exit_code, 0) << r;
  std::fprintf(stderr, "[ measured ] SIGINT to exit: %.2f s\n", took);
  EXPECT_LT(took, 3.0) << r;
  EXPECT_TRUE(contains(r.err, " not processed")) << r;
}

// A stop signal that comes as the traced work ends by itself (the -p
// process exits as the user presses Ctrl-C, say) is a request to stop
// that the end handlers are already answering: it does not cut them, a
// second one does, and so does their second running out.
TEST_F(E2eStops, OnlyASecondStopSignalCutsTheEndHandlers) {
  TempDir dir;
  std::string script = dir.write("end.lua",
                                 "fxt{ file = \"end.fxt\" }\n"
                                 "probe(\"tracepoint:io_uring:io_uring_complete\", {\n"
                                 "  draw = { kind = \"instant\", name = \"complete\" } })\n"
                                 "probe(\"end\", function()\n"
                                 "  while true do pcall(function() while true do end end) end\n"
                                 "end)\n");
  for (int signals : {1, 2}) {
    SCOPED_TRACE(std::to_string(signals) + " SIGINT");
    Process tracer(mt({"-o", dir.file("t.fxt"), "-c", "true", script}));
    ASSERT_TRUE(tracer.wait_for_err("moontrace: wrote ")) << tracer.wait(1s);
    for (int i = 0; i < signals; i++) {
      tracer.signal(SIGINT);
      std::this_thread::sleep_for(50ms);
    }
    auto r = tracer.wait(10s);
    EXPECT_EQ(r.exit_code, 1) << r;
    EXPECT_TRUE(contains(r.err, signals == 1 ? "end.lua:5: the end handler was stopped: still "
                                               "running 1 s after tracing stopped\n"
                                             : "end.lua:5: the end handler was interrupted by a "
                                               "stop signal\n"))
        << r;
  }
}

// Ctrl-C while Clang compiles: moontrace leaves at once, with 128 + signal,
// and the -c command never runs.
TEST_F(E2eStops, StopSignalDuringTheCompileLeavesAtOnce) {
  for (int sig : {SIGINT, SIGTERM}) {
    TempDir dir;
    Command c = mt({"--no-cache", "-c", "touch " + dir.file("ran"), script("complete.lua")});
    c.env.push_back({"MOONTRACE_TEST_SLOW_COMPILE_MS", "60000"});
    Process tracer(c);
    std::this_thread::sleep_for(1500ms);  // declared, resolved, compiling
    double took;
    auto r = stop_and_time(tracer, sig, took);
    EXPECT_EQ(r.exit_code, 128 + sig) << r;
    EXPECT_EQ(r.err, "moontrace: stopped before tracing began (SIG" +
                         std::string(sigabbrev_np(sig)) + ")\n");
    EXPECT_LT(took, 2.0) << r;
    EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << "the command ran";
  }
}

// The probes' teardown is left to a child that outlives moontrace, which
// no run waits for, however moontrace's threads end: one that ended after
// the main thread once left moontrace with the last copy of the links,
// and its exit waited 1-2 s for their detaching, a run in ten to thirty.
TEST_F(E2eStops, NoRunWaitsForItsProbesTeardown) {
  Command uring = mt({"-o", "/dev/null", "-c", "true", "uring"});
  ASSERT_EQ(run(uring, 120s).exit_code, 0);  // compiled: the runs below start warm
  for (int i = 0; i < 100; i++) {
    Process tracer(uring);
    ASSERT_TRUE(tracer.wait_for_err(" events, ")) << tracer.wait(1s);
    auto said = Clock::now();  // its last line
    auto r = tracer.wait(10s);
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_LT(seconds_since(said), 1.2) << "run " << i;  // the detaching took 1.8 s
  }
}

// A script whose top level never ends is stopped like a compile.
TEST_F(E2eStops, StopSignalWhileTheScriptDeclaresLeavesAtOnce) {
  Process tracer(mt({script("busy_body.lua")}));
  std::this_thread::sleep_for(1s);
  tracer.signal(SIGHUP);
  auto r = tracer.wait(10s);
  EXPECT_EQ(r.exit_code, 128 + SIGHUP) << r;
  EXPECT_EQ(r.err, "moontrace: stopped before tracing began (SIGHUP)\n");
}

// So is a warm start whose maps are being made ahead on a thread
// (run/maps_ahead.h): the thread is not waited for.
TEST_F(E2eStops, StopSignalWhileMapsAreMadeAheadLeavesAtOnce) {
  TempDir dir;
  auto command = [&](bool busy) {
    Command c = mt({"-v", "--unsafe", "-c", "sh -c true", script("busy_when_asked.lua")});
    c.env.push_back({"MOONTRACE_CACHE", dir.file("cache")});
    if (busy)
      c.env.push_back({"MT_TEST_BUSY", "1"});
    return c;
  };
  for (int i = 0; i < 2; i++) {  // the second one makes its maps ahead
    Result r = run(command(false), 120s);
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(contains(r.err, "maps made ahead: "), i == 1) << r;
  }
  Process tracer(command(true));
  std::this_thread::sleep_for(100ms);
  double took;
  auto r = stop_and_time(tracer, SIGINT, took);
  EXPECT_EQ(r.exit_code, 128 + SIGINT) << r;
  EXPECT_TRUE(contains(r.err, "moontrace: stopped before tracing began (SIGINT)\n")) << r;
  EXPECT_LT(took, 2.0) << r;
}

// A Lua error in a handler ends the run with the error, and the trace
// drawn so far, the buffered records included, is finished and valid.
TEST_F(E2eStops, LuaErrorInAHandlerKeepsTheTrace) {
  TempDir dir;
  Process storm(stopped_nop_storm(1000));
  Process tracer(mt({"-o", dir.file("t.fxt"), script("draw_then_error.lua"), "--target",
                     std::to_string(storm.pid())}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  storm.resume();
  auto r = tracer.wait(20s);
  EXPECT_EQ(r.exit_code, 1) << r;
  auto errors = r.err_lines();
  ASSERT_GE(errors.size(), 2u) << r;
  EXPECT_TRUE(contains(errors[0], "draw_then_error.lua:12: the 100th completion")) << r;
  EXPECT_TRUE(contains(errors[1], "moontrace: wrote ")) << r;
  auto problems = mt::testing::perfetto_problems_in_file(dir.file("t.fxt"));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  EXPECT_GE(instants_named(dir.file("t.fxt"), "complete"), 100u);
}

// Draws 20,000 events into `file` (plain or gzipped), SIGKILLs moontrace
// `after` the last one, and counts the events that read back from what it
// left, up to where the file ends (a gzip stream then has no end).
size_t events_left_by_sigkill(const std::string &file, std::chrono::milliseconds after) {
  Process storm(stopped_nop_storm(20000));
  Process tracer(
      mt({"-o", file, script("draw_complete.lua"), "--target", std::to_string(storm.pid())}));
  EXPECT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  storm.resume();
  EXPECT_EQ(storm.wait(10s).exit_code, 0);
  std::this_thread::sleep_for(after);
  tracer.signal(SIGKILL);
  tracer.wait(10s);
  std::string trace;
  try {
    mt::TraceFileReader reader(file);
    char buf[1 << 16];
    for (size_t n; (n = reader.read(buf, sizeof buf)) > 0;)
      trace.append(buf, n);
  } catch (const mt::Error &) {
  }
  EXPECT_EQ(trace.size() % 8, 0u);
  size_t completes = 0;
  EXPECT_NO_THROW({
    for (const auto &rec : mt::read_fxt(trace))
      completes += rec.type == 4 && rec.name == "complete";
  });
  return completes;
}

// What was written reaches the file within a second, in whole records: a
// trace SIGKILLed 2.5 s after its last event holds every event.
TEST_F(E2eStops, SigkillLeavesAReadableTrace) {
  TempDir dir;
  EXPECT_EQ(events_left_by_sigkill(dir.file("t.fxt"), 2500ms), 20000u);
  auto dump = run(mt({"dump", dir.file("t.fxt")}));
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
}

// A gzipped trace is flushed to a block's end every second: what a
// SIGKILL leaves inflates (without its end) to every record.
TEST_F(E2eStops, SigkillLeavesAnInflatableGzippedTrace) {
  TempDir dir;
  EXPECT_EQ(events_left_by_sigkill(dir.file("t.fxt.gz"), 3500ms), 20000u);
}

// The -c command's failure is reported and becomes moontrace's status.
TEST_F(E2eStops, CommandFailureIsOurs) {
  auto r = run(mt({"-c", "sh -c 'exit 3'", script("complete.lua")}));
  EXPECT_EQ(r.exit_code, 3) << r;
  EXPECT_EQ(r.err_lines(), std::vector<std::string>{"moontrace: the command exited with status 3"});
  r = run(mt({"-c", "sh -c 'kill -SEGV $$'", script("complete.lua")}));
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r;
  EXPECT_EQ(r.err_lines(),
            std::vector<std::string>{
                "moontrace: the command was killed by signal 11 (Segmentation fault)"});
}

// A -c command that ignores SIGTERM and writes its pid to PID_FILE.
std::string stubborn_command(const std::string &pid_file) {
  return "sh -c \"echo $$ > " + pid_file + "; trap '' TERM; exec sleep 60\"";
}

// The pid PID_FILE names, once there (0 if it never comes).
pid_t command_pid(const std::string &pid_file) {
  std::string pid;
  for (int i = 0; i < 200 && pid.empty(); i++, std::this_thread::sleep_for(10ms))
    pid = read_file(pid_file);
  return pid.empty() ? 0 : std::stoi(pid);
}

// Whether COMMAND is gone within 2 s; if not, it is killed now.
bool gone(pid_t command) {
  bool gone = false;
  for (int i = 0; i < 200 && !gone; i++, std::this_thread::sleep_for(10ms))
    gone = kill(command, 0) != 0 && errno == ESRCH;
  if (!gone)
    kill(command, SIGKILL);
  return gone;
}

// A command that ignores SIGTERM neither holds the stop nor outlives
// moontrace: it is killed after a grace period (ChildProcess::end).
TEST_F(E2eStops, CommandIgnoringSigtermIsKilledAfterAGracePeriod) {
  TempDir dir;
  std::string pid_file = dir.file("pid");
  auto r =
      run(mt({"--duration", "2", "-c", stubborn_command(pid_file), script("complete.lua")}), 30s);
  ASSERT_FALSE(r.timed_out) << r;
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_FALSE(contains(r.err, "killed by signal")) << r;  // the stop was moontrace's
  pid_t command = command_pid(pid_file);
  ASSERT_NE(command, 0) << "the command never started";
  EXPECT_TRUE(gone(command)) << "the command outlived moontrace, pid " << command;
}

// However moontrace ends, its command does not outlive it: killed, it takes
// the command with it (the parent-death signal).
TEST_F(E2eStops, SigkilledMoontraceTakesItsCommandWithIt) {
  TempDir dir;
  std::string pid_file = dir.file("pid");
  Process tracer(mt({"-c", stubborn_command(pid_file), script("complete.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  pid_t command = command_pid(pid_file);
  ASSERT_NE(command, 0) << "the command never started";
  kill(tracer.pid(), SIGKILL);
  tracer.wait(10s);
  EXPECT_TRUE(gone(command)) << "the command outlived moontrace, pid " << command;
}

// Started with stderr closed, moontrace holds that number (app/standard_fds.h):
// no file it opens takes it, and the -c command finds /dev/null there.
TEST_F(E2eStops, AClosedStderrIsHeldNotReused) {
  TempDir dir;
  std::string seen = dir.file("fd2");
  Command c = mt({"-c", "sh -c 'readlink /proc/$$/fd/2 > " + seen + "'", script("complete.lua")});
  std::string line = "exec";
  for (const auto &word : c.argv) {
    line += " '";
    for (char ch : word)
      line += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    line += "'";
  }
  auto r = run(Command{{"/bin/sh", "-c", line + " 2>&-"}});
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(read_file(seen), "/dev/null\n") << r;
}

// The command starts as a shell would start it: no signal ignored (moontrace
// ignores SIGPIPE) and none blocked.
TEST_F(E2eStops, CommandStartsWithDefaultSignals) {
  auto r = run(mt({"-c", "grep -E '^Sig(Ign|Blk)' /proc/self/status", script("complete.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "SigBlk:\t0000000000000000\n")) << r;
  EXPECT_TRUE(contains(r.out, "SigIgn:\t0000000000000000\n")) << r;
}

// With -f json the command's output goes to stderr: stdout is JSON only.
TEST_F(E2eStops, JsonWithCommandKeepsTheCommandOffStdout) {
  auto r = run(mt({"-f", "json", "-c", "echo hello from the command", script("complete.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  for (const auto &line : lines(r.out))
    EXPECT_EQ(line.substr(0, 9), "{\"type\":\"") << r;
  EXPECT_TRUE(contains(r.err, "hello from the command\n")) << r;
}

// -p stops tracing when the process exits, with what it did.
TEST_F(E2eStops, PidThatExitsStopsTracing) {
  Process storm(stopped_nop_storm(300));
  Process tracer(mt({"-p", std::to_string(storm.pid()), script("complete.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  storm.resume();
  ASSERT_EQ(storm.wait(10s).exit_code, 0);
  auto r = tracer.wait(10s);
  ASSERT_FALSE(r.timed_out) << r;
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 300)) << r;
}

}  // namespace
}  // namespace e2e
