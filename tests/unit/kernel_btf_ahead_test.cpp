// Which objects make libbpf parse the kernel's BTF, so that a warm start
// parses it ahead for them and for no other (run/kernel_btf_ahead.h).
#include "run/kernel_btf_ahead.h"

#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <utility>

#include "compile_in_child.h"
#include "run/kernel_btf_lookups.h"

namespace mt {
namespace {

std::vector<char> object_of(const std::string &source) {
  CompileResult r = testing::compile_in_child("#include \"mt_helpers.h\"\n" + source, {});
  EXPECT_TRUE(r.ok) << source;
  return r.object;
}

bool needs(const std::string &source) {
  std::vector<char> object = object_of(source);
  return needs_kernel_btf({object.data(), object.size()});
}

// A tp_btf program and an fentry one, calling a kfunc.
const char *kLooksUpNames =
    "extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id)\n"
    "    __attribute__((section(\".ksyms\")));\n"
    "SEC(\"tp_btf/sched_switch\")\n"
    "int p(void *ctx) { return bpf_rdonly_cast(ctx, 1) != 0; }\n"
    "SEC(\"fentry/vfs_read\")\n"
    "int q(void *ctx) { return 0; }\n";

TEST(KernelBtfAhead, AClassicTracepointNeedsNone) {
  EXPECT_FALSE(
      needs("SEC(\"tracepoint/syscalls/sys_enter_getppid\")\n"
            "int p(void *ctx) { return bpf_get_smp_processor_id() > 1; }\n"));
}

TEST(KernelBtfAhead, ProgramsAttachedByBtfIdNeedIt) {
  for (const char *section : {"tp_btf/sched_switch", "fentry/vfs_read", "fexit/vfs_read"})
    EXPECT_TRUE(needs(std::string("SEC(\"") + section + "\")\nint p(void *ctx) { return 0; }\n"))
        << section;
}

TEST(KernelBtfAhead, CoReRelocationsAndKernelSymbolsNeedIt) {
  EXPECT_TRUE(
      needs("struct task_struct { int pid; } __attribute__((preserve_access_index));\n"
            "SEC(\"tracepoint/syscalls/sys_enter_getppid\")\n"
            "int p(void *ctx) {\n"
            "  struct task_struct *t = (void *)bpf_get_current_task();\n"
            "  int pid = 0;\n"
            "  bpf_probe_read_kernel(&pid, 4, __builtin_preserve_access_index(&t->pid));\n"
            "  return pid > 1;\n"
            "}\n"));
  EXPECT_TRUE(
      needs("extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id)\n"
            "    __attribute__((section(\".ksyms\")));\n"
            "SEC(\"tracepoint/syscalls/sys_enter_getppid\")\n"
            "int p(void *ctx) {\n"
            "  return bpf_rdonly_cast((void *)bpf_get_current_task(), 1) != 0;\n"
            "}\n"));
}

TEST(KernelBtfAhead, ADamagedObjectNeedsNone) {
  EXPECT_FALSE(needs_kernel_btf("not an ELF object"));
  EXPECT_FALSE(needs_kernel_btf(""));
}

// Both halves of a load take the one copy parsed ahead; it lives until the
// last of them and the run have let go of it.
TEST(KernelBtfAhead, LoadsShareTheCopyParsedAhead) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    GTEST_SKIP() << "no kernel BTF";
  std::atomic<bool> cancelled = false;
  parse_kernel_btf_ahead("", cancelled);
  // Not lent yet: the engine's own KernelBtf, made before the loads.
  struct btf *engine = btf__load_vmlinux_btf();
  lend_kernel_btf_ahead();
  struct btf *first = btf__load_vmlinux_btf();
  struct btf *second = btf__load_vmlinux_btf();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, second);
  EXPECT_NE(engine, first);
  btf__free(engine);
  btf__free(first);
  KernelBtfAhead counts = drop_kernel_btf_ahead();
  EXPECT_TRUE(counts.parsed);
  EXPECT_EQ(counts.taken, 2u);
  // Still held by the second load, which reads it whole.
  EXPECT_GT(btf__type_cnt(second), 1000u);
  EXPECT_GT(btf__find_by_name_kind(second, "task_struct", BTF_KIND_STRUCT), 0);
  btf__free(second);
  // Dropped, loads parse their own again, freed as usual.
  struct btf *own = btf__load_vmlinux_btf();
  ASSERT_NE(own, nullptr);
  EXPECT_FALSE(drop_kernel_btf_ahead().parsed);
  btf__free(own);
}

TEST(KernelBtfLookups, NamesWhatLibbpfLooksUpToLoad) {
  std::vector<char> object = object_of(kLooksUpNames);
  std::set<std::pair<std::string, uint32_t>> names;
  for (const BtfLookup &lookup : kernel_btf_lookups({object.data(), object.size()}))
    names.insert({lookup.name, lookup.kind});
  EXPECT_EQ(names, (std::set<std::pair<std::string, uint32_t>>{
                       {"btf_trace_sched_switch", BTF_KIND_TYPEDEF},
                       {"vfs_read", BTF_KIND_FUNC},
                       {"bpf_rdonly_cast", BTF_KIND_FUNC},
                       {"bpf_rdonly_cast", BTF_KIND_VAR}}));
  EXPECT_TRUE(kernel_btf_lookups("not an ELF object").empty());
}

// What the loads look up by name in the shared copy is answered from one
// pass made ahead, as libbpf's own search of the whole copy answers it.
TEST(KernelBtfAhead, NamesAreFoundAheadAsLibbpfFindsThem) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    GTEST_SKIP() << "no kernel BTF";
  struct btf *own = btf__load_vmlinux_btf();  // not lent: searched by libbpf
  ASSERT_NE(own, nullptr);
  std::vector<char> object = object_of(kLooksUpNames);
  std::atomic<bool> cancelled = false;
  parse_kernel_btf_ahead({object.data(), object.size()}, cancelled);
  lend_kernel_btf_ahead();
  struct btf *shared = btf__load_vmlinux_btf();
  ASSERT_NE(shared, own);
  unsigned found = 0;
  const std::pair<const char *, uint32_t> lookups[] = {
      {"btf_trace_sched_switch", BTF_KIND_TYPEDEF},
      {"vfs_read", BTF_KIND_FUNC},
      {"bpf_rdonly_cast", BTF_KIND_FUNC},
      {"bpf_rdonly_cast", BTF_KIND_VAR},
      {"task_struct", BTF_KIND_STRUCT}};  // not looked for ahead
  for (auto [name, kind] : lookups) {
    int expected = btf__find_by_name_kind(own, name, kind);
    EXPECT_EQ(btf__find_by_name_kind(shared, name, kind), expected) << name;
    found += expected > 0 && kind != BTF_KIND_STRUCT;
  }
  EXPECT_GE(found, 2u);  // the tracepoint and the function, at least
  btf__free(shared);
  EXPECT_EQ(drop_kernel_btf_ahead().found_ahead, found);
  btf__free(own);
}

TEST(KernelBtfAhead, ACancelledRunParsesNothing) {
  std::atomic<bool> cancelled = true;
  parse_kernel_btf_ahead("", cancelled);
  EXPECT_FALSE(drop_kernel_btf_ahead().parsed);
}

}  // namespace
}  // namespace mt
