// A big script is compiled in two parts at once and linked
// (app/compile_job.h): the object traces as one compiled whole would, and
// a compile error is told as it would be.
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <regex>
#include <thread>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

class E2eSplitCompile : public BpfTest {};

Command split(std::vector<std::string> args, bool in_parts) {
  Command c = mt(std::move(args));
  c.env.push_back({"MOONTRACE_TEST_SPLIT_COMPILE", in_parts ? "1" : "0"});
  return c;
}

TEST_F(E2eSplitCompile, ProgramsOfBothPartsTrace) {
  auto r = run(
      split({"-v", "--no-cache", "-c", workload("nop_storm") + " 300", script("four_programs.lua")},
            true));
  ASSERT_EQ(r.exit_code, 0) << r;
  // The four probes' programs and -c's followers of forks and frees.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.err, m, std::regex(R"(compiled in two parts at once \((\d) and (\d) programs\), linked)")))
      << r;
  EXPECT_GE(std::stoi(m[1]), 1);
  EXPECT_GE(std::stoi(m[2]), 1);
  EXPECT_EQ(std::stoi(m[1]) + std::stoi(m[2]), 6);
  EXPECT_EQ(values_of(r.out, "submitted"), std::vector<uint64_t>{300}) << r;
  EXPECT_EQ(values_of(r.out, "completed"), std::vector<uint64_t>{300}) << r;
  EXPECT_EQ(values_of(r.out, "succeeded"), std::vector<uint64_t>{300}) << r;
  auto entered = values_of(r.out, "entered");
  ASSERT_EQ(entered.size(), 1u) << r;
  EXPECT_GE(entered[0], 1u) << r;
  EXPECT_EQ(values_of(r.out, "returned"), entered) << r;
}

// The errors of a compile, each with its source line and caret, sorted:
// the parts tell theirs in turn, one compile in the order of its C.
std::vector<std::string> errors_in(std::string err) {
  std::vector<std::string> errors;
  std::regex start(R"((^|\n)(moontrace: )?\S+:\d+:\d+: error: )");
  std::vector<size_t> at;
  for (std::sregex_iterator i(err.begin(), err.end(), start), end; i != end; ++i)
    at.push_back(i->position() + i->str(1).size());
  for (size_t k = 0; k < at.size(); k++)
    errors.push_back(err.substr(at[k], (k + 1 < at.size() ? at[k + 1] : err.size()) - at[k]));
  for (auto &e : errors)
    if (e.starts_with("moontrace: "))
      e = e.substr(11);
  std::sort(errors.begin(), errors.end());
  return errors;
}

// Whichever part the probes with errors fall in, the errors read as the
// whole script's compile tells them: each once, at the script's line, at
// most three.
TEST_F(E2eSplitCompile, ErrorsInEitherPartAreToldAsInOneCompile) {
  for (std::string bad : {"1", "2", "3", "4", "14", "23", "123", "1234"}) {
    std::vector<std::string> args = {"--no-cache", script("four_programs.lua"), "--bad", bad};
    auto whole = run(split(args, false));
    auto parts = run(split(args, true));
    EXPECT_EQ(whole.exit_code, 1) << whole;
    EXPECT_EQ(parts.exit_code, 1) << parts;
    EXPECT_TRUE(parts.err.starts_with("moontrace: ")) << parts;
    auto told = errors_in(parts.err);
    ASSERT_EQ(told.size(), std::min<size_t>(bad.size(), 3)) << parts;
    for (const auto &e : told)
      EXPECT_TRUE(e.find("four_programs.lua:12:") != std::string::npos &&
                  e.find("no_such_field") != std::string::npos)
          << e;
    if (bad.size() <= 3)
      EXPECT_EQ(told, errors_in(whole.err)) << "probes " << bad;
  }
}

// Only the second part calls a kfunc (bpf_rdonly_cast, for a direct
// load): the first lists it all the same, for libbpf to link and load.
TEST_F(E2eSplitCompile, AKfuncOnlyTheSecondPartCallsLinks) {
  auto c = run(mt({"--emit-c", script("kfunc_in_one_part.lua")}));
  if (!contains(c.out, "#define MT_HAVE_RDONLY_CAST 1"))
    GTEST_SKIP() << "this kernel has no bpf_rdonly_cast: nothing calls a kfunc";
  auto r = run(split(
      {"-v", "--no-cache", "-c", workload("nop_storm") + " 50", script("kfunc_in_one_part.lua")},
      true));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, "compiled in two parts at once")) << r;
  auto parents = values_of(r.out, "parent");
  ASSERT_EQ(parents.size(), 1u) << r;  // the workload's parent, moontrace
  EXPECT_GT(parents[0], 1u) << r;
  EXPECT_EQ(values_of(r.out, "entered").size(), 1u) << r;
}

// Only the second part loops with mt_for (on the kernel's number iterator
// where it has one: three kfuncs), and the first lists them all the same;
// compiled whole, the loop runs alike.
TEST_F(E2eSplitCompile, ALoopOnlyTheSecondPartMakesLinks) {
  for (bool in_parts : {false, true}) {
    auto r = run(split(
        {"-v", "--no-cache", "-c", workload("nop_storm") + " 50", script("loop_in_one_part.lua")},
        in_parts));
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(contains(r.err, "compiled in two parts at once"), in_parts) << r;
    EXPECT_EQ(values_of(r.out, "sum"), std::vector<uint64_t>{12}) << r;  // 0 + 2 + 4 + 6, to 7
    EXPECT_EQ(values_of(r.out, "entered").size(), 1u) << r;
  }
}

// A part that makes no object (its child killed here) leaves the compile
// to one more child, of the whole.
TEST_F(E2eSplitCompile, WithoutThePartsTheWholeIsCompiled) {
  Command c =
      mt({"-v", "--no-cache", "-c", workload("nop_storm") + " 30", script("four_programs.lua")});
  c.env.push_back({"MOONTRACE_TEST_SPLIT_COMPILE", "1, its child dies"});
  auto r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err,
                       "compiled whole after all (the process compiling half the "
                       "programs died)"))
      << r;
  EXPECT_EQ(values_of(r.out, "completed"), std::vector<uint64_t>{30}) << r;
}

// A stop while the parts compile ends both processes at once.
TEST_F(E2eSplitCompile, AStopEndsBothParts) {
  Command c = split({"--no-cache", "-c", "true", script("four_programs.lua")}, true);
  c.env.push_back({"MOONTRACE_TEST_SLOW_COMPILE_MS", "60000"});
  Process tracer(c);
  std::this_thread::sleep_for(1500ms);  // both parts compiling
  tracer.signal(SIGTERM);
  auto r = tracer.wait(3s);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r;
  // The tracer's process group (its own, e2e_support.cpp) is empty: the
  // child compiling the second part died with it.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; i++, std::this_thread::sleep_for(20ms))
    gone = kill(-tracer.pid(), 0) != 0 && errno == ESRCH;
  EXPECT_TRUE(gone) << "a process of the tracer's group outlived it";
}

// uring is big enough to be split on any machine with two CPUs.
TEST_F(E2eSplitCompile, UringIsCompiledInTwoParts) {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) < 2)
    GTEST_SKIP() << "one CPU: compiled whole";
  auto r = run(mt({"-v", "--no-cache", "-o", "/dev/null", "-c", "true", "uring"}), 120s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, "compiled in two parts at once")) << r;
}

}  // namespace
}  // namespace e2e
