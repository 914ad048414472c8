// Mistakes give one clear line (or a located diagnostic) and exit code 1.
#include <signal.h>

#include <regex>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

class E2eErrors : public BpfTest {};

TEST_F(E2eErrors, UnknownTracepointSuggestsTheNearestName) {
  auto r = run(mt({script("typo.lua")}));
  EXPECT_TRUE(
      one_line_error(r, {"typo.lua:2", "did you mean", "tracepoint:io_uring:io_uring_complete"}));
}

TEST_F(E2eErrors, AggregationMistakesNameTheScriptLine) {
  TempDir dir;
  auto check = [&](const std::string &text, const std::vector<std::string> &needles) {
    auto r = run(mt({dir.write("agg.lua", text)}));
    EXPECT_TRUE(one_line_error(r, needles)) << text;
  };
  const std::string complete = "\"tracepoint:io_uring:io_uring_complete\"";
  check("local c = count{}\nprobe(" + complete + ")\n", {"agg.lua:1:", "fed by no probe"});
  check("local h = hist{}\nprobe(" + complete + ", { aggregate = h })\n",
        {"agg.lua:1:", "needs value"});
  check("probe(" + complete + ", { filter = \"latency > 5\" })\n",
        {"agg.lua:1:", "stop probe of a latency pair"});
  check("\nlocal l = lhist{ value = \"1\", min = 5, max = 1, step = 1 }\n",
        {"agg.lua:2:", "min < max"});
  check("latency{ start = " + complete + ", stop = " + complete + ", key = \"tid\" }\n",
        {"agg.lua:1:", "goes nowhere"});
  // A C error points into the string, with the line and a caret below.
  auto r = run(mt({dir.write("agg.lua", "local h = hist{ value = \"args.nope\" }\nprobe(" +
                                            complete + ", { aggregate = h })\n")}));
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(contains(r.err, "agg.lua:1:31: error: no member named 'nope'")) << r;
}

TEST_F(E2eErrors, LuaSyntaxErrorNamesFileAndLine) {
  auto r = run(mt({script("syntax_error.lua")}));
  EXPECT_TRUE(one_line_error(r, {"syntax_error.lua:3:"}));
}

// A handler error stops tracing at once: the tracer is not told to stop.
TEST_F(E2eErrors, LuaErrorInHandlerNamesFileAndLine) {
  Process workload(stopped_nop_storm(3));
  Process tracer(mt({"-p", std::to_string(workload.pid()), script("handler_error.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  workload.resume();
  EXPECT_TRUE(one_line_error(tracer.wait(5s), {"handler_error.lua:5:", "nil"}));
}

// The same error raised while the last events are drained after a stop
// request must not be lost: the tracer is stopped while the workload runs,
// so every event is still buffered when SIGINT arrives.
TEST_F(E2eErrors, LuaErrorInHandlerWhileDrainingIsReported) {
  Process workload(stopped_nop_storm(3));
  Process tracer(mt({"-p", std::to_string(workload.pid()), script("handler_error.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  tracer.signal(SIGSTOP);
  workload.resume();
  ASSERT_EQ(workload.wait(10s).exit_code, 0);
  tracer.signal(SIGINT);
  tracer.signal(SIGCONT);
  EXPECT_TRUE(one_line_error(tracer.wait(5s), {"handler_error.lua:5:", "nil"}));
}

// FILE:LINE:COL: error: ..., then the script's line, then a caret under the
// expression inside the Lua string.
TEST_F(E2eErrors, TypeErrorInFilterPointsIntoTheString) {
  auto r = run(mt({script("type_error.lua")}));
  ASSERT_EQ(r.exit_code, 1) << r;
  auto err = r.err_lines();
  ASSERT_GE(err.size(), 3u) << r;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(err[0], m, std::regex(R"(type_error\.lua:3:(\d+): error: .*nosuchfield)")))
      << r;
  int column = std::stoi(m[1]);

  std::string source = lines(read_file(script("type_error.lua")))[2];
  size_t indent = err[1].find(source);
  ASSERT_NE(indent, std::string::npos) << "the script line is not quoted\n" << r;
  size_t caret = err[2].find('^');
  ASSERT_NE(caret, std::string::npos) << r;
  EXPECT_EQ(caret - indent + 1, (size_t)column) << "the caret is not at the reported column\n" << r;

  std::string expr = "args.nosuchfield";
  int first = (int)source.find(expr) + 1;
  EXPECT_GE(column, first) << r;
  EXPECT_LT(column, first + (int)expr.size()) << r;
}

TEST_F(E2eErrors, NotRootIsRefused) {
  auto r = run(as_nobody(mt({script("complete.lua")})));
  EXPECT_TRUE(one_line_error(r, {"root"}));
  EXPECT_TRUE(contains(r.err, "CAP_BPF")) << r;
}

// Types come from tracefs formats, which only root may read, or from BTF.
// Without root, record layouts come from the kernel's BTF. Where BTF has
// none (syscall tracepoints) or a wildcard needs tracefs's list, the error
// says so in one line.
TEST_F(E2eErrors, EmitCNeedsNoRoot) {
  auto r = run(as_nobody(mt({"--emit-c", script("complete.lua")})));
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "SEC(\"tracepoint/io_uring/io_uring_complete\")")) << r;
  EXPECT_TRUE(contains(r.out, "/complete.lua\"\n")) << r;  // a #line back to the script

  r = run(as_nobody(mt({"--emit-c", script("read.lua")})));
  EXPECT_TRUE(one_line_error(r, {"read.lua:2", "readable by root only"}));
  r = run(as_nobody(mt({"--emit-c", script("wildcard.lua")})));
  EXPECT_TRUE(one_line_error(r, {"wildcard.lua:2", "cannot list tracepoints"}));
}

TEST_F(E2eErrors, BadParameterValueNamesTheOption) {
  auto r = run(mt({script("complete.lua"), "--min", "abc"}));
  EXPECT_TRUE(one_line_error(r, {"--min", "abc"}));
  r = run(mt({script("complete.lua"), "--nosuch", "1"}));
  EXPECT_TRUE(one_line_error(r, {"--nosuch"}));
}

// Point 16: kprobe programs load (pass the verifier) and then cannot attach.
TEST_F(E2eErrors, KprobeLoadsThenFailsToAttach) {
  auto r = run(mt({"-v", script("kprobe.lua")}));
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("loaded [1-9][0-9]* BPF programs"))) << r;
  EXPECT_TRUE(contains(r.err, "CONFIG_KPROBES")) << r;

  r = run(mt({script("kprobe.lua")}));
  EXPECT_TRUE(
      one_line_error(r, {"kprobe.lua:2", "kprobe:vfs_read", "CONFIG_KPROBES", "tracepoint"}));
}

TEST_F(E2eErrors, ProbeListFallsBackToTracepoint) {
  auto r = run(mt({"-v", "-c", "cat /dev/null", script("kprobe_fallback.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  bool told = false;
  for (const auto &l : lines(r.err))
    told |= contains(l, "tracepoint:syscalls:sys_enter_read") && contains(l, "kprobe:vfs_read");
  EXPECT_TRUE(told) << "-v does not say which alternative was used\n" << r;
  EXPECT_FALSE(contains(r.err, "attached kprobe")) << r;
}

// Point 10: a program the verifier refuses is reported at the probe's
// script line, with the verifier's reason; -v adds the kernel's log.
TEST_F(E2eErrors, VerifierRejectionNamesTheProbeLine) {
  auto r = run(mt({script("verifier_reject.lua")}));
  EXPECT_TRUE(one_line_error(r, {"verifier_reject.lua:2:", "verifier rejected", "run with -v"}));
  r = run(mt({"-v", script("verifier_reject.lua")}));
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(contains(r.err, "-- BEGIN PROG LOAD LOG --")) << r;
}

// Probes sharing a tracepoint's program: the refusal names the line of
// the probe the verifier refused, not the first sharer's.
TEST_F(E2eErrors, VerifierRejectionInASharedProgramNamesItsProbesLine) {
  auto r = run(mt({script("verifier_reject_shared.lua")}));
  EXPECT_TRUE(one_line_error(r, {"verifier_reject_shared.lua:8:", "verifier rejected"}));
}

// Many programs load in two halves at once (bpf_loader.h): a refusal in
// either half names its probe, with the kernel's log under -v.
TEST_F(E2eErrors, VerifierRejectionNamesTheProbeInEitherHalfOfTheLoad) {
  for (bool alone : {false, true}) {  // the refused program in the second half, then the first
    std::vector<std::string> args = {script("verifier_reject_many.lua")};
    if (alone)
      args.push_back("--alone");
    auto r = run(mt(args));
    EXPECT_TRUE(one_line_error(r, {"verifier_reject_many.lua:6:", "verifier rejected",
                                   "tp_btf:io_uring_complete", "access beyond"}))
        << r;
    args.insert(args.begin(), "-v");
    r = run(mt(args));
    EXPECT_EQ(r.exit_code, 1) << r;
    EXPECT_TRUE(contains(r.err, "-- BEGIN PROG LOAD LOG --")) << r;
  }
  auto r = run(mt({"-v", "-c", "true", "-o", "/dev/null", "uring"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, "BPF programs, verified in two halves at once")) << r;
}

// The verifier's log comes whole, however long: its reason, on the last
// line, is in the one-line error and at the end of the -v log.
TEST_F(E2eErrors, LongVerifierLogsAreKeptWhole) {
  auto r = run(mt({script("verifier_reject_long.lua")}));
  EXPECT_TRUE(one_line_error(r, {"verifier_reject_long.lua:3:", "verifier rejected", "ctx ptr"}));
  r = run(mt({"-v", script("verifier_reject_long.lua")}));
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_GT(r.err.size(), 8192u) << r;
  EXPECT_TRUE(contains(r.err, "-- END PROG LOAD LOG --")) << r;
}

}  // namespace
}  // namespace e2e
