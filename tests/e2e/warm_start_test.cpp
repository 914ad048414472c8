// Warm starts (issue 18): a script run again on the same kernel reads no
// kernel BTF of its own and generates no C, taking both as an earlier
// start left them (app/front_end_cache.h); and a changed script, module,
// parameter or engine build is generated again, never served stale.
// (A changed kernel: FrontEndCache.* in the unit tests.)
#include <sched.h>

#include <filesystem>
#include <regex>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

constexpr const char *kReused = "using the C an earlier start generated";

constexpr const char *kModule = "return { base = 100 }\n";
// Prints a number the generated C holds: the module's base, the script's
// own step and the parameter, added up in Lua.
constexpr const char *kScript = R"lua(local m = require "wsmod"
local extra = param("extra", { type = "int", default = 0, help = "added in the C" })
probe("tracepoint:syscalls:sys_enter_getppid", { capture = { v = "(__u64)(" .. (m.base + 1 + extra) .. ")" } },
      function(ev) print("v=" .. ev.v) exit() end)
)lua";

class E2eWarmStart : public BpfTest {
 protected:
  void SetUp() override {
    BpfTest::SetUp();
    dir_.write("wsmod.lua", kModule);
    dir_.write("ws.lua", kScript);
  }
  // The script under -v, with a private cache; sh calls getppid.
  Result traced(std::vector<std::string> script_args = {},
                std::vector<std::string> engine_args = {},
                const std::string &binary = moontrace()) {
    engine_args.insert(engine_args.end(), {"-v", "-c", "sh -c true", dir_.file("ws.lua")});
    engine_args.insert(engine_args.end(), script_args.begin(), script_args.end());
    Command c = mt(engine_args);
    c.argv[0] = binary;
    c.env.push_back({"MOONTRACE_CACHE", dir_.file("cache")});
    return run(c, 60s);
  }
  // Opens of the kernel's BTF by a run of ARGS (strace).
  int btf_opens(const std::vector<std::string> &args) {
    std::string log = dir_.file("strace.log");
    Command c = mt(args);
    c.argv.insert(c.argv.begin(), {"strace", "-f", "-qq", "-e", "trace=openat", "-o", log});
    c.env.push_back({"MOONTRACE_CACHE", dir_.file("cache")});
    Result r = run(c, 120s);
    EXPECT_EQ(r.exit_code, 0) << r;
    int opens = 0;
    for (const auto &line : lines(read_file(log)))
      opens += contains(line, "\"/sys/kernel/btf/vmlinux\"");
    return opens;
  }
  // A run that traced and printed the value V.
  static void expect_traced(const Result &r, const std::string &v) {
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(contains(r.out, "v=" + v)) << r;
  }
  // The script changed: its own step is 2, not 1.
  void write_script_with_step_2() {
    std::string changed = kScript;
    dir_.write("ws.lua", changed.replace(changed.find("+ 1 +"), 5, "+ 2 +"));
  }
  // Whether -v says that all the maps that could be made ahead were, and
  // taken by the load (none is "0 of 0": nothing was tried).
  static bool all_maps_made_ahead(const Result &r) {
    std::smatch m;
    static const std::regex said("maps made ahead: ([0-9]+) of ([0-9]+)");
    return std::regex_search(r.err, m, said) && m[1] == m[2] && m[1] != "0";
  }
  TempDir dir_;
};

TEST_F(E2eWarmStart, AWarmStartReadsNoKernelBtfOfItsOwnAndGeneratesNoC) {
  // One tracepoint of tracefs: nothing needs the kernel's BTF once warm.
  std::vector<std::string> small = {"-c", "sh -c true", dir_.file("ws.lua")};
  EXPECT_GE(btf_opens(small), 1);
  EXPECT_EQ(btf_opens(small), 0);
  // uring: libbpf needs it for the object's tp_btf programs and CO-RE
  // reads, once per object: its 30 programs load in two halves at once,
  // each its own object, where there are two CPUs to run them (bpf_loader.h).
  // One copy, read while the script is declared, serves both
  // (run/kernel_btf_ahead.h). The engine itself reads it no more.
  std::vector<std::string> uring = {"-o", "/dev/null", "-c", "true", "uring"};
  int cold = btf_opens(uring);
  EXPECT_EQ(btf_opens(uring), 1);
  EXPECT_GE(cold, 2);
  Result r = traced();
  EXPECT_TRUE(contains(r.err, kReused)) << r;
  EXPECT_TRUE(contains(r.err, "using cached object")) << r;
}

TEST_F(E2eWarmStart, AChangedScriptModuleOrParameterIsGeneratedAgain) {
  auto expect = [&](Result r, const std::string &v, bool reused) {
    expect_traced(r, v);
    EXPECT_EQ(contains(r.err, kReused), reused) << r;
  };
  expect(traced(), "101", false);
  expect(traced(), "101", true);
  write_script_with_step_2();
  expect(traced(), "102", false);
  expect(traced(), "102", true);
  dir_.write("wsmod.lua", "return { base = 200 }\n");
  expect(traced(), "202", false);
  expect(traced({"--extra", "5"}), "207", false);
  expect(traced({"--extra", "5"}), "207", true);
  expect(traced(), "202", true);
}

// The maps of the object the same invocation loaded last are made while
// the script is declared (run/maps_ahead.h); an object that turns out to
// be another one is loaded on maps of its own.
TEST_F(E2eWarmStart, AWarmStartMakesItsMapsWhileTheScriptIsDeclared) {
  auto expect = [&](Result r, const std::string &v, bool ahead) {
    expect_traced(r, v);
    EXPECT_EQ(all_maps_made_ahead(r), ahead) << r;
  };
  expect(traced(), "101", false);
  expect(traced(), "101", true);
  expect(traced({"--extra", "5"}), "106", false);
  // The same script and arguments, another module: the maps made for the
  // object of the run before are not this object's.
  dir_.write("wsmod.lua", "return { base = 200 }\n");
  expect(traced(), "201", false);
  expect(traced(), "201", true);
  write_script_with_step_2();
  expect(traced(), "202", false);
  expect(traced(), "202", true);
  expect(traced({"--extra", "5"}), "207", false);
  expect(traced({}, {"--no-cache"}), "202", false);
  // Without -p/-c (maps sized otherwise), and uring, whose programs load
  // in two halves on shared maps where there are two CPUs.
  std::vector<std::string> uring = {"-v", "--duration", "1", "-o", "/dev/null", "uring"};
  for (bool ahead : {false, true}) {
    Command c = mt(uring);
    c.env.push_back({"MOONTRACE_CACHE", dir_.file("cache")});
    Result r = run(c, 120s);
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(all_maps_made_ahead(r), ahead) << r;
    // And the kernel's BTF its tp_btf programs need, parsed once and taken
    // by each half's load (run/kernel_btf_ahead.h), which would parse it.
    cpu_set_t cpus;
    ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
    std::string loads = CPU_COUNT(&cpus) >= 2 ? "2 loads" : "1 load";
    bool all_taken = contains(r.err, "kernel BTF parsed ahead, taken by " + loads);
    EXPECT_EQ(all_taken, ahead) << r;
    // The tracepoints and kfuncs those loads look up in it by name, found
    // ahead in one pass (run/kernel_btf_lookups.h).
    std::smatch m;
    static const std::regex found("([0-9]+) names found ahead");
    EXPECT_EQ(std::regex_search(r.err, m, found) && std::stoi(m[1]) > 0, ahead) << r;
  }
  // The small script's object needs none.
  Result small = traced();
  expect(small, "202", true);
  EXPECT_FALSE(contains(small.err, "kernel BTF parsed ahead")) << small;
}

TEST_F(E2eWarmStart, AnotherBuildOfTheEngineGeneratesAgain) {
  ASSERT_EQ(traced().exit_code, 0);
  ASSERT_TRUE(contains(traced().err, kReused));
  std::string copy = dir_.file("moontrace-copy");
  std::filesystem::copy_file(moontrace(), copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_all);
  Result r = traced({}, {}, copy);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "v=101")) << r;
  EXPECT_FALSE(contains(r.err, kReused)) << r;
  EXPECT_TRUE(contains(traced({}, {}, copy).err, kReused));
}

TEST_F(E2eWarmStart, NoCacheGeneratesAgainAndSafetyChecksRunOnReusedC) {
  ASSERT_EQ(traced().exit_code, 0);
  Result r = traced({}, {"--no-cache"});
  EXPECT_TRUE(contains(r.out, "v=101")) << r;
  EXPECT_FALSE(contains(r.err, kReused)) << r;
  // C that only --unsafe may run, generated and kept by such a run, is
  // refused to a run without it all the same.
  dir_.write("pp.lua",
             "probe(\"tracepoint:syscalls:sys_enter_getppid\", { action = "
             "\"int x = 1;\\n#define Y 2\\n\" }, function() exit() end)\n");
  auto pp = [&](std::vector<std::string> first) {
    first.insert(first.end(), {"-v", "-c", "sh -c true", dir_.file("pp.lua")});
    Command c = mt(first);
    c.env.push_back({"MOONTRACE_CACHE", dir_.file("cache")});
    return run(c, 60s);
  };
  r = pp({"--unsafe"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(pp({"--unsafe"}).err, kReused));
  r = pp({});
  EXPECT_NE(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, "a preprocessor directive (#define)")) << r;
}

}  // namespace
}  // namespace e2e
