// moontrace check: which probe of each list this kernel would use, the
// script compiled and loaded into the verifier with nothing attached; the
// same with --btf for a kernel's BTF alone (here this kernel's own: the
// 6.1 kernel's is checked in vm_test.cpp); missing probes make it fail.
#include <bpf/btf.h>

#include <iostream>
#include <regex>
#include <tuple>

#include "kernel/btf_trace_events.h"
#include "kernel/tracefs_format.h"
#include "tests/e2e/json_lines.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eCheck : public BpfTest {};

TEST_F(E2eCheck, UringCompilesAndLoadsHereWithNothingAttachedNorWritten) {
  TempDir dir;
  auto r = run({mt({"check", "uring"}).argv, {}, false, dir.path().string()}, 120s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "on this kernel (")) << r;
  // 6.18 names submit io_uring_submit_req; tp_btf is preferred where the
  // kernel passes what the trace needs.
  EXPECT_TRUE(contains(r.out, ": tp_btf:io_uring_submit_req\n")) << r;
  EXPECT_TRUE(contains(r.out, "loaded: the verifier accepted every program (nothing attached)"))
      << r;
  EXPECT_FALSE(contains(r.err, "attached")) << r;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "check wrote a file";
  // uring's optional probe for uring.current() cannot be had here.
  EXPECT_TRUE(contains(r.out, "optional, not there: fentry:io_issue_sqe")) << r;

  auto j = run(mt({"-f", "json", "check", "uring"}), 120s);
  ASSERT_EQ(j.exit_code, 0) << j;
  auto report = data_of_type(json_lines(j.out), "check");
  ASSERT_TRUE(report.is_object()) << j;
  EXPECT_EQ(report["ok"], true);
  EXPECT_EQ(report["loaded"], true);
  EXPECT_GT(report["compiled_programs"].get<int>(), 20);
  ASSERT_EQ(report["probes"].size(), probes_used(r.out).size());
  for (const auto &p : report["probes"])
    EXPECT_TRUE(p["uses"].is_string()) << p;
}

// This kernel's BTF, given as a file: the probes are those picked here
// (tracepoints read from BTF alone), compiled, not loaded. But fentry:
// this kernel refuses it, which its BTF cannot tell (the 6.1 VM, which
// allows it, checks fentry too).
TEST_F(E2eCheck, BtfOfThisKernelPicksTheProbesPickedHere) {
  TempDir dir;
  std::string btf = dir.write("vmlinux", read_file("/sys/kernel/btf/vmlinux"));
  // Classic tracepoints of a class of their own, of a shared class
  // (block_rq_issue is block_rq's), and syscalls', with fields read.
  std::string classic =
      dir.write("classic.lua",
                "probe('tracepoint:syscalls:sys_enter_openat', { capture = { dfd = 'args.dfd', "
                "flags = 'args.flags' } })\n"
                "probe('tracepoint:syscalls:sys_exit_openat', { filter = 'args.ret >= 0' })\n"
                "probe('tracepoint:block:block_rq_issue', { capture = { dev = 'args.dev', "
                "bytes = 'args.bytes' } })\n"
                "probe('tracepoint:io_uring:io_uring_create', { capture = { fd = 'args.fd' } })\n");
  for (const std::string &script : {std::string("uring"), classic}) {
    auto here = run(mt({"check", script}), 120s);
    ASSERT_EQ(here.exit_code, 0) << here;
    auto from_btf = run(mt({"check", "--btf", btf, script}), 120s);
    ASSERT_EQ(from_btf.exit_code, 0) << from_btf;
    EXPECT_TRUE(contains(from_btf.out, "on the kernel of " + btf)) << from_btf;
    EXPECT_TRUE(contains(from_btf.out, "not loaded: that kernel is not the one running here"))
        << from_btf;
    EXPECT_EQ(probes_used(from_btf.out, true), probes_used(here.out)) << from_btf << "\n" << here;
  }
}

std::vector<std::tuple<std::string, int, int>> layout_of(const mt::TraceFormat &f) {
  std::vector<std::tuple<std::string, int, int>> out;
  for (const auto &x : f.fields)
    out.emplace_back(x.name, x.offset, x.size);
  return out;
}

// Records read from BTF alone match tracefs's, for events of a class of
// their own and of shared classes (DEFINE_EVENT); and for every event of
// this kernel, given its record as the hint check --btf gives (the record
// this kernel has), BTF never picks another layout.
TEST_F(E2eCheck, TracepointRecordsFromBtfMatchTracefs) {
  const mt::KernelBtf *btf = mt::KernelBtf::get();
  ASSERT_NE(btf, nullptr);
  for (auto [category, event] :
       std::vector<std::pair<std::string, std::string>>{{"io_uring", "io_uring_submit_req"},
                                                        {"io_uring", "io_uring_complete"},
                                                        {"block", "block_rq_issue"},
                                                        {"block", "block_rq_insert"},
                                                        {"block", "block_rq_complete"},
                                                        {"sched", "sched_switch"},
                                                        {"sched", "sched_process_exit"}}) {
    auto tracefs = mt::read_trace_format(category, event);
    ASSERT_TRUE(tracefs) << event;
    auto from_btf = mt::btf_trace_event_format(*btf, category, event);
    ASSERT_TRUE(from_btf) << event;
    EXPECT_EQ(layout_of(*from_btf), layout_of(*tracefs)) << event;
  }
  size_t resolved = 0, events = 0;
  for (const auto &full : mt::list_tracepoints()) {
    std::string category = full.substr(0, full.find(':')), event = full.substr(full.find(':') + 1);
    auto tracefs = mt::read_trace_format(category, event);
    if (category == "syscalls" || category == "ftrace" || !tracefs)
      continue;
    events++;
    if (auto from_btf = mt::btf_trace_event_format(*btf, category, event, &*tracefs)) {
      resolved++;
      EXPECT_EQ(layout_of(*from_btf), layout_of(*tracefs)) << full;
    }
  }
  std::cout << "[ btf      ] " << resolved << " of " << events << " records from BTF\n";
  EXPECT_GT(resolved, events * 9 / 10);
}

TEST_F(E2eCheck, AMissingProbeIsNamedAndFailsBeforeCompiling) {
  TempDir dir;
  std::string script = dir.write("t.lua",
                                 "probe('tracepoint:sched:sched_switch', {})\n"
                                 "probe({'tracepoint:nope:nothing', 'tp_btf:nothing_either'}, {})\n"
                                 "probe('kprobe:vfs_read', {})\n");
  auto r = run(mt({"check", script}), 120s);
  EXPECT_EQ(r.exit_code, 1) << r;
  EXPECT_TRUE(contains(r.out, "t.lua:1: tracepoint:sched:sched_switch\n")) << r;
  EXPECT_TRUE(contains(r.out, "t.lua:2: MISSING\n  tracepoint:nope:nothing: no such tracepoint\n"))
      << r;
  EXPECT_TRUE(contains(r.out, "a probe is missing: not compiled")) << r;
  EXPECT_TRUE(contains(r.err, "t.lua: a probe is missing on this kernel")) << r;
  // This kernel has no kprobes: said on the probe's line, not a crash.
  EXPECT_TRUE(contains(r.out, "t.lua:3: MISSING\n  kprobe:vfs_read:")) << r;
}

TEST_F(E2eCheck, BadUsesAreOneLine) {
  EXPECT_TRUE(one_line_error(run(mt({"check"})), {"check [--btf FILE|DIR] SCRIPT"}));
  EXPECT_TRUE(one_line_error(run(mt({"check", "--btf"})), {"check [--btf FILE|DIR] SCRIPT"}));
  EXPECT_TRUE(one_line_error(run(mt({"check", "-f", "json", "uring"})),
                             {"engine options such as -f go before check"}));
  EXPECT_TRUE(one_line_error(run(mt({"check", "--btf", "", "uring"})),
                             {"option --btf needs a file or a directory"}));
  EXPECT_TRUE(one_line_error(run(mt({"check", "--btf=/a", "--btf", "/b", "uring"})),
                             {"option --btf is given twice"}));
  EXPECT_TRUE(
      one_line_error(run(mt({"-c", "true", "check", "uring"})), {"check attaches nothing"}));
  TempDir dir;
  std::string not_btf = dir.write("x", "not BTF");
  EXPECT_TRUE(
      one_line_error(run(mt({"check", "--btf", not_btf, "uring"})),
                     {"--btf " + not_btf + ": not a BTF file (BPF object format invalid)"}));
  EXPECT_TRUE(one_line_error(run(mt({"check", "--btf", dir.file("absent"), "uring"})),
                             {"--btf " + dir.file("absent") + ": No such file or directory"}));
  EXPECT_TRUE(one_line_error(run(mt({"check", "--btf", "/dev/zero", "uring"})),
                             {"--btf /dev/zero: not a regular file"}));
  // BTF whose typedef names itself: refused in one line, not followed.
  struct btf *looped = btf__new_empty();
  btf__add_int(looped, "int", 4, BTF_INT_SIGNED);
  btf__add_typedef(looped, "loop", 2);
  uint32_t size = 0;
  const void *raw = btf__raw_data(looped, &size);
  std::string damaged = dir.write("looped", std::string(static_cast<const char *>(raw), size));
  btf__free(looped);
  auto r = run(mt({"check", "--btf", damaged, "uring"}));
  EXPECT_TRUE(one_line_error(r, {"--btf " + damaged + ": "})) << r;
  EXPECT_TRUE(contains(r.err, "refers to itself") || contains(r.err, "not a BTF file")) << r;
}

}  // namespace
// The largest key Clang takes beside a record loads, whether mt_flush is
// a global function (with private stacks, as here on 6.13 and later) or
// inlined (the VM test on 6.1 runs one too).
TEST_F(E2eCheck, TheLargestKeyClangTakesBesideARecordLoads) {
  TempDir dir;
  std::string script =
      dir.write("key488.lua",
                "local c = count{ by = { s = 'str((void *)0, 488)' } }\n"
                "probe('tracepoint:syscalls:sys_enter_getppid', { aggregate = c, capture = { "
                "'pid' } })\n");
  auto r = run({mt({"check", script}).argv, {}, false, dir.path().string()}, 120s);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "loaded: the verifier accepted every program")) << r;
}

}  // namespace e2e
