// kstack and ustack (issue 19, point 1) on call_chain, whose stacks are
// known: named in events, aggregations (text, JSON, folded) and drawings,
// also once the program has exited.
#include <signal.h>

#include <filesystem>
#include <thread>

#include "tests/e2e/json_lines.h"
#include "tests/fxt_validator.h"
#include "trace/fxt_reader.h"

namespace e2e {
namespace {

class E2eStacks : public BpfTest {
 protected:
  // call_chain 300000: it runs about a second, long enough for its first
  // stack to be named while it runs.
  void run_a_long_call_chain() {
    ASSERT_EQ(run({{workload("call_chain"), "300000"}}, 60s).exit_code, 0);
  }
  // The end of a run that counted call_chain's calls by ustack, folded.
  void expect_the_long_chain_named(Process &tracer) {
    Result r = tracer.wait();
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_TRUE(contains(r.out, "main;chain_outer;chain_middle;chain_inner;chain_syscall 300000"))
        << r;
  }
};

// Only call_chain's system calls.
const char *kProbe =
    R"(probe("tracepoint:syscalls:sys_enter_getppid", { filter = "comm[0] == 'c' && comm[1] == 'a' && comm[2] == 'l' && comm[3] == 'l'", )";

// What call_chain's user stack is, from the system call out: chain_syscall
// is inlined into chain_inner (only DWARF names it).
const std::vector<std::string> kChain = {"chain_syscall", "chain_inner", "chain_middle",
                                         "chain_outer", "main"};

// The functions of frames written one after the other, offsets left out.
std::vector<std::string> functions(const std::string &frames, char separator) {
  std::vector<std::string> out;
  std::stringstream in(frames);
  for (std::string f; std::getline(in, f, separator);) {
    f.erase(0, f.find_first_not_of(' '));
    if (f.empty())
      continue;
    out.push_back(f.substr(0, f.rfind('+') == std::string::npos ? f.size() : f.rfind('+')));
  }
  return out;
}

// call_chain's functions, then the C library's that called main: a shared
// library's static function, named from its debug file (libc6-dbg).
bool starts_with_chain(const std::vector<std::string> &functions) {
  return functions.size() > kChain.size() &&
         std::equal(kChain.begin(), kChain.end(), functions.begin()) &&
         functions[kChain.size()] == "__libc_start_call_main";
}

TEST_F(E2eStacks, EventsCarryTheirKernelAndUserStacksNamed) {
  TempDir tmp;
  tmp.write("t.lua", std::string(kProbe) + R"(capture = { "kstack", "ustack" } }, function(ev)
      print("user:" .. ev.ustack:gsub("\n", ";"))
      print("kernel:" .. ev.kstack:gsub("\n", ";"))
    end))");
  Result r = run(mt({"-c", workload("call_chain") + " 3", tmp.file("t.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  int users = 0, kernels = 0;
  for (const auto &line : lines(r.out)) {
    if (line.starts_with("user:")) {
      users++;
      EXPECT_TRUE(starts_with_chain(functions(line.substr(5), ';'))) << line;
    } else if (line.starts_with("kernel:")) {
      kernels++;
      auto frames = functions(line.substr(7), ';');
      // Named from kallsyms, the system call's entry among them; no frame
      // of the BPF program that took it.
      EXPECT_TRUE(std::any_of(frames.begin(), frames.end(), [](auto &f) {
        return contains(f, "syscall");
      })) << line;
      for (const auto &f : frames)
        EXPECT_FALSE(f.starts_with("0x") || f.starts_with("bpf_prog_")) << line;
    }
  }
  EXPECT_EQ(users, 3) << r;
  EXPECT_EQ(kernels, 3) << r;
}

TEST_F(E2eStacks, AggregationsByStackAreNamedAfterTheProgramExited) {
  TempDir tmp;
  tmp.write("t.lua",
            "local calls = count{ name = \"calls\", by = { \"ustack\", \"kstack(2)\" } }\n" +
                std::string(kProbe) + "aggregate = calls })\n");
  // Printed at the end, when call_chain is gone: its binary is found by
  // build id (the -c command's), the C library's by the processes that
  // map it.
  Result folded = run(mt({"-f", "folded", "-c", workload("call_chain") + " 5", tmp.file("t.lua")}));
  ASSERT_EQ(folded.exit_code, 0) << folded;
  auto rows = lines(folded.out);
  ASSERT_EQ(rows.size(), 1u) << folded;
  // Root first; the kernel's two frames after the user's; the count.
  ASSERT_TRUE(rows[0].ends_with(" 5")) << rows[0];
  auto frames = functions(rows[0].substr(0, rows[0].size() - 2), ';');
  ASSERT_EQ(frames.size(), kChain.size() + 3) << rows[0];  // + __libc_start_call_main
  std::vector<std::string> user(frames.begin() + 1, frames.end() - 2);
  EXPECT_TRUE(std::equal(kChain.rbegin(), kChain.rend(), user.begin())) << rows[0];

  Result text = run(mt({"-c", workload("call_chain") + " 5", tmp.file("t.lua")}));
  ASSERT_EQ(text.exit_code, 0) << text;
  EXPECT_TRUE(contains(text.out, "@calls[\n        chain_syscall\n        chain_inner+")) << text;
  EXPECT_TRUE(contains(text.out, "]: 5\n")) << text;

  Result json = run(mt({"-f", "json", "-c", workload("call_chain") + " 5", tmp.file("t.lua")}));
  ASSERT_EQ(json.exit_code, 0) << json;
  auto data = data_of_type(json_lines(json.out), "map");
  ASSERT_EQ(data["rows"].size(), 1u) << json;
  EXPECT_TRUE(starts_with_chain(functions(data["rows"][0]["ustack"].get<std::string>(), '\n')))
      << json;
  EXPECT_EQ(data["rows"][0]["value"], 5) << json;
}

TEST_F(E2eStacks, AProgramNotStartedByMoontraceIsNamedToo) {
  TempDir tmp;
  tmp.write("t.lua", "local calls = count{ name = \"calls\", by = { \"ustack\" } }\n" +
                         std::string(kProbe) + "aggregate = calls })\n");
  Process tracer(mt({"-f", "folded", tmp.file("t.lua")}));
  ASSERT_TRUE(tracer.wait_for_err("attached")) << tracer.err();
  // The run reads its mappings when its first stack arrives (a program
  // that exits at once is named only where another process maps its
  // binary, or its debug file is installed).
  run_a_long_call_chain();
  tracer.signal(SIGINT);
  expect_the_long_chain_named(tracer);
}

// Other users' binaries are parsed by a child that runs as nobody, with
// no capabilities, in an empty root, holding nothing of the run's but its
// socket; a Ctrl-C at the terminal (to the whole process group) stops the
// run, not the child, so the stacks printed at the end are named.
TEST_F(E2eStacks, BinariesAreReadByAChildRunningAsNobody) {
  TempDir tmp;
  // Events name their stacks as they arrive: a few, handled quietly.
  tmp.write("t.lua", "local calls = count{ name = \"calls\", by = { \"ustack\" } }\n" +
                         std::string(kProbe) + "aggregate = calls })\n" + kProbe +
                         "action = \"if (bpf_get_prandom_u32() % 1000) return 0;\", "
                         "capture = { \"ustack\" } }, function() end)\n");
  Process tracer(mt({"-f", "folded", tmp.file("t.lua")}));
  ASSERT_TRUE(tracer.wait_for_err("attached")) << tracer.err();
  run_a_long_call_chain();
  std::string child, status;
  for (int i = 0; i < 1000 && !contains(status, "Uid:\t65534"); i++) {
    Result found = run({{"pgrep", "-P", std::to_string(tracer.pid()), "-f", "symbolizer-child"}});
    child = found.exit_code == 0 ? lines(found.out)[0] : "";
    status = child.empty() ? "" : read_file("/proc/" + child + "/status");
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_FALSE(child.empty()) << tracer.err();
  EXPECT_TRUE(contains(status, "Uid:\t65534\t65534\t65534\t65534\n")) << status;
  EXPECT_TRUE(contains(status, "Gid:\t65534\t65534\t65534\t65534\n")) << status;
  EXPECT_TRUE(contains(status, "CapEff:\t0000000000000000\n")) << status;
  EXPECT_TRUE(contains(status, "CapPrm:\t0000000000000000\n")) << status;
  EXPECT_TRUE(contains(status, "NoNewPrivs:\t1\n")) << status;
  std::string root = std::filesystem::read_symlink("/proc/" + child + "/root").string();
  EXPECT_TRUE(root.ends_with(" (deleted)")) << root;  // empty, and gone
  for (const auto &entry : std::filesystem::directory_iterator("/proc/" + child + "/fd")) {
    std::string target = std::filesystem::read_symlink(entry.path()).string();
    EXPECT_TRUE(target == "/dev/null" || target.starts_with("socket:")) << target;
  }
  kill(-tracer.pid(), SIGINT);  // as a terminal's Ctrl-C does
  expect_the_long_chain_named(tracer);
}

TEST_F(E2eStacks, DrawnStacksAreArgumentsPerfettoShows) {
  TempDir tmp;
  tmp.write(
      "t.lua",
      "fxt{ file = \"t.fxt\" }\n" + std::string(kProbe) +
          R"lua(draw = { kind = "instant", name = "getppid", args = { "ustack", "kstack(3)" } } })
)lua");
  Result r =
      run(mt({"-o", tmp.file("t.fxt"), "-c", workload("call_chain") + " 2", tmp.file("t.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(mt::testing::perfetto_problems_in_file(tmp.file("t.fxt")), std::vector<std::string>{});
  int drawn = 0;
  for (const auto &record : mt::read_fxt(read_file(tmp.file("t.fxt")))) {
    if (record.type != 4 || record.name != "getppid")
      continue;
    drawn++;
    std::string text = mt::fxt_record_text(record);
    EXPECT_TRUE(contains(text, "ustack=\"chain_syscall\\nchain_inner+")) << text;
    EXPECT_TRUE(contains(text, "chain_middle+")) << text;
    EXPECT_TRUE(contains(text, "kstack=\"")) << text;
  }
  EXPECT_EQ(drawn, 2) << r;
}

}  // namespace
}  // namespace e2e
