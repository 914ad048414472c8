// Point 3 and 4 of the engine issue: tp_btf, raw tracepoints, __data_loc
// strings and uprobes on a real workload, kernel pointers followed in each.
#include <sys/stat.h>
#include <sys/syscall.h>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

class E2eProbeKinds : public BpfTest {
 protected:
  // `cat FILE` traced by `script`, FILE a file m.txt of its own: the run,
  // and FILE's path.
  std::pair<Result, std::string> cat_traced_by(const std::string &script) {
    std::string file = dir_.write("m.txt", "x");
    dir_.write("open.lua", script);
    return {run(mt({"-c", "cat " + file, dir_.file("open.lua")})), file};
  }
  TempDir dir_;
  Result trace(const std::string &kind, int nops, int batch = 32) {
    return run(
        mt({"-c", workload("nop_storm") + " " + std::to_string(nops) + " " + std::to_string(batch),
            script("probe_kinds.lua"), "--kind", kind}));
  }
};

TEST_F(E2eProbeKinds, TpBtfReadsPointersDirectly) {
  auto r = trace("tp_btf", 200);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 200)) << r;
  // Through the untyped request pointer: every one a NOP, of one ring.
  EXPECT_EQ(values_of(r.out, "op"), std::vector<uint64_t>(200, 0)) << r;
  auto flags = values_of(r.out, "ring_flags");
  ASSERT_EQ(flags.size(), 200u) << r;
  EXPECT_EQ(std::count(flags.begin(), flags.end(), flags[0]), 200) << r;
}

TEST_F(E2eProbeKinds, RawTracepointReadsPointersThroughProbeReads) {
  auto r = trace("rawtracepoint", 200);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 200)) << r;
  EXPECT_EQ(values_of(r.out, "flags").size(), 200u) << r;
}

TEST_F(E2eProbeKinds, DataLocFieldsArriveAsStrings) {
  auto r = trace("data_loc", 50);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 50)) << r;
  for (const auto &line : lines(r.out))
    EXPECT_TRUE(contains(line, "op_str=NOP")) << line;
}

TEST_F(E2eProbeKinds, UprobeAndUretprobeSeeArgumentsAndResult) {
  auto r = trace("uprobe", 1, 16);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "entries"), std::vector<uint64_t>{16}) << r;
  EXPECT_EQ(values_of(r.out, "result"), std::vector<uint64_t>{0}) << r;
  EXPECT_EQ(values_of(r.out, "retval"), std::vector<uint64_t>{0}) << r;
}

// A syscall tracepoint's pointers are the caller's: str() reads them from
// its memory (kernel memory would give ""); ustr() says so, kstr() reads
// kernel memory whatever the pointer.
TEST_F(E2eProbeKinds, SyscallPointersAreReadFromTheCallersMemory) {
  auto [r, file] = cat_traced_by(
      "probe(\"tracepoint:syscalls:sys_enter_openat\", { capture = {\n"
      "  f = \"str(args.filename, 256)\", u = \"ustr(args.filename, 256)\",\n"
      "  k = \"kstr(args.filename, 256)\", s = \"str( args.filename , 256 )\" } },\n"
      "  function(ev)\n"
      "  if ev.f:find(\"m.txt\", 1, true) then print(\"f=\" .. ev.f .. \" u=\" .. ev.u ..\n"
      "    \" k=[\" .. ev.k .. \"] s=\" .. ev.s) end end)\n");
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "f=" + file + " u=" + file + " k=[] s=" + file)) << r;
}

// A kernel probe that gets a program's pointer (here tp_btf's pt_regs of
// openat: its second argument): str() reads it from the program's memory
// once the kernel's read refuses it, kstr() does not.
TEST_F(E2eProbeKinds, StrOfAUserPointerAKernelProbeGotReadsTheProgramsMemory) {
  auto [r, file] = cat_traced_by(
      "probe(\"tp_btf:sys_enter\", { filter = \"args.id == " + std::to_string(SYS_openat) +
      "\", capture = {\n"
      "  f = \"str(args.regs->si, 256)\", k = \"kstr(args.regs->si, 256)\" } },\n"
      "  function(ev) if ev.f:find(\"m.txt\", 1, true) then\n"
      "    print(\"f=\" .. ev.f .. \" k=[\" .. ev.k .. \"]\") end end)\n");
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "f=" + file + " k=[]")) << r;
}

// `task` is the current task_struct, followed with CO-RE reads in a
// tracepoint and directly in tp_btf: its tgid is the event's pid, its
// parent moontrace (which started the command), its comm the command's.
TEST_F(E2eProbeKinds, TaskIsTheCurrentTaskInEveryProbeKind) {
  TempDir dir;
  for (std::string at : {"tracepoint:syscalls:sys_enter_getppid", "tp_btf:sched_process_exec"}) {
    dir.write("task.lua",
              "probe(\"" + at +
                  "\", { capture = { me = \"task->tgid\", pid = \"pid\",\n"
                  "  parent = \"task->real_parent->tgid\", c = \"str(task->comm, 16)\" } },\n"
                  "  function(ev) print(\"me=\" .. ev.me .. \" pid=\" .. ev.pid .. \" parent=\" "
                  ".. ev.parent .. \" comm=\" .. ev.c) exit() end)\n");
    Process p(mt({"-c", "sh -c true", dir.file("task.lua")}));
    auto r = p.wait(30s);
    ASSERT_EQ(r.exit_code, 0) << r;
    auto me = values_of(r.out, "me"), pid = values_of(r.out, "pid");
    ASSERT_EQ(me.size(), 1u) << at << r;
    EXPECT_EQ(me, pid) << at << r;
    EXPECT_EQ(values_of(r.out, "parent"), std::vector<uint64_t>{uint64_t(p.pid())}) << at << r;
    EXPECT_TRUE(contains(r.out, "comm=sh")) << at << r;
  }
}

// A uprobe reads the traced program's memory: `task` there is refused, at
// the probe's line, rather than read as zeros.
TEST_F(E2eProbeKinds, TaskInAUprobeIsRefused) {
  TempDir dir;
  dir.write("u.lua", "probe(\"uprobe:" + workload("nop_storm") +
                         ":main\", { capture = { p = \"task->tgid\" } })\n");
  auto r = run(mt({"-c", "true", dir.file("u.lua")}));
  EXPECT_TRUE(one_line_error(r, {"u.lua:1", "task is the kernel's task_struct"}));
}

// A uprobe's binary is checked before libbpf opens it: a device (opening
// one can act), a FIFO (which blocks) or a file of /proc is never opened,
// and the line says why.
TEST_F(E2eProbeKinds, AUprobeOnWhatIsNoRegularFileIsRefused) {
  TempDir dir;
  std::string fifo = dir.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (std::string binary : {std::string("/dev/null"), fifo, std::string("/proc/self/mem")}) {
    dir.write("u.lua", "probe(\"uprobe:" + binary + ":main\", function() end)\n");
    auto r = run(mt({"--duration", "1", dir.file("u.lua")}), 10s);
    EXPECT_TRUE(one_line_error(
        r, {"u.lua:1", binary + " is not a regular file, so it has no functions to probe"}))
        << r;
  }
}

}  // namespace
}  // namespace e2e
