// C generation: a declaration and resolved probes in, the BPF C text out.
#include "codegen/c_generator.h"

#include <bpf/btf.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "common/error.h"
#include "compile_in_child.h"
#include "kernel/kernel_btf.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

bool has(const std::string &source, const std::string &text) {
  return source.find(text) != std::string::npos;
}
bool has(const GeneratedProgram &p, const std::string &text) {
  return has(p.source, text);
}

// The kernel this runs on, as the generator asks about it.
struct RunningKernel : testing::FakeKernel {
  const KernelBtf *btf() override { return KernelBtf::get(); }
};

}  // namespace

TEST(CGenerator, PlacesExpressionsAtTheirScriptLines) {
  GeneratedProgram p = testing::generate_complete("args.res >= param.min", "args.user_data");
  // The expression sits on the line after #line, at its script column.
  EXPECT_TRUE(has(p, "#line 4 \"test.lua\"\n            args.res >= param.min\n")) << p.source;
  EXPECT_TRUE(has(p, "#line 5 \"test.lua\"\n                   args.user_data\n"));
  EXPECT_FALSE(has(p, "vmlinux.h"));
}

// A script's path goes into #line as a C string, which Clang reads back as
// the path: quotes, backslashes and newlines included.
TEST(CGenerator, LineDirectivesSpellTheScriptsPathAsACString) {
  const std::string path = "we\"ird\\dir\n/test.lua";
  Declaration d = testing::complete_declaration("nosuch > 0", "args.user_data");
  d.script_path = path;
  d.probes[0].where.file = d.probes[0].predicate.where.file = path;
  d.probes[0].captures[0].expr.where.file = path;
  testing::FakeKernel kernel;
  GeneratedProgram p = testing::generate_on(d, kernel);
  EXPECT_TRUE(has(p, "#line 4 \"we\\\"ird\\\\dir\\012/test.lua\"\n")) << p.source;
  CompileOptions options;
  options.line_files = {path};
  CompileResult r = testing::compile_in_child(p.source, options);
  ASSERT_FALSE(r.ok);
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].message.rfind(
                path + ":4:13: error: use of undeclared identifier 'nosuch'", 0),
            0u)
      << r.diagnostics[0].message;
}

TEST(CGenerator, LaysOutTracepointFieldsAtTheirOffsets) {
  GeneratedProgram p = testing::generate_complete("1", "args.user_data");
  EXPECT_TRUE(has(p,
                  "struct mt_args_0 {\n  __u8 __pad_0[8];\n  void *ctx;\n  void *req;\n"
                  "  __u64 user_data;\n  __s32 res;\n  __u32 cflags;\n"))
      << p.source;
  EXPECT_TRUE(has(p, "__u32 op_str;"));
  EXPECT_TRUE(has(p, "SEC(\"tracepoint/io_uring/io_uring_complete\")"));
}

TEST(CGenerator, DeclaresParametersAsReadOnlyConstants) {
  GeneratedProgram p = testing::generate_complete("args.res > param.min", "args.res");
  EXPECT_EQ(p.params_struct, "mt_params");
  EXPECT_TRUE(has(p, "struct mt_params {\n  __s64 min;\n};"));
  EXPECT_TRUE(has(p, "const volatile struct mt_params param"));
}

TEST(CGenerator, DefinesOnlyTheBuiltinsAProbeUses) {
  GeneratedProgram p = testing::generate_complete("pid != 1", "args.res");
  EXPECT_TRUE(has(p, "__u32 pid = __pid_tgid >> 32;"));
  EXPECT_FALSE(has(p, "bpf_get_current_comm(comm"));
}

// The target check, pid, tid and the record's thread share one read of
// the task's ids: the check's under -p/-c, else one where first needed.
TEST(CGenerator, ReadsTheTaskOncePerProgram) {
  const std::string for_targets =
      "  __u64 __pid_tgid = mt_filter_targets ? bpf_get_current_pid_tgid() : 0;\n"
      "  if (!mt_is_target_task(__pid_tgid))\n    return 0;\n";
  const std::string where_needed =
      "  if (!mt_filter_targets)\n    __pid_tgid = bpf_get_current_pid_tgid();\n";
  auto calls = [](const std::string &text) {
    size_t n = 0;
    for (size_t at = 0; (at = text.find("bpf_get_current_pid_tgid()", at)) != std::string::npos;
         at++)
      n++;
    return n;
  };
  auto program_of = [](const GeneratedProgram &p) {
    size_t at = p.source.find("int mt_probe_0(");
    return p.source.substr(at, p.source.find("#endif /* program */", at) - at);
  };

  // Naming neither pid nor tid, and drawing nothing: the check's read only.
  std::string plain = program_of(testing::generate_complete("args.res > 0", "args.res"));
  EXPECT_TRUE(has(plain, for_targets)) << plain;
  EXPECT_EQ(calls(plain), 1u) << plain;

  // pid and tid: read once more only where the check did not.
  std::string named = program_of(testing::generate_complete("pid != tid", "args.res"));
  ASSERT_TRUE(has(named, for_targets)) << named;
  EXPECT_LT(named.find(for_targets), named.find(where_needed)) << named;
  EXPECT_TRUE(has(
      named, where_needed + "  __u32 pid = __pid_tgid >> 32;\n  __u32 tid = (__u32)__pid_tgid;\n"))
      << named;
  EXPECT_EQ(calls(named), 2u) << named;

  // A drawing's record carries the same read.
  Declaration d = testing::complete_declaration("args.res > 0", "args.res");
  d.probes[0].draws.push_back(DrawDecl{});
  testing::FakeKernel kernel;
  std::string drawn = program_of(testing::generate_on(d, kernel));
  EXPECT_TRUE(has(drawn, where_needed + "  __r->__ts = __now;\n  __r->__task = __pid_tgid;\n"))
      << drawn;
  EXPECT_EQ(calls(drawn), 2u) << drawn;
}

TEST(CGenerator, CapturesDataLocFieldsAsStrings) {
  GeneratedProgram p = testing::generate_complete("1", "args.op_str");
  EXPECT_TRUE(has(p, "char ud[64];")) << p.source;
  EXPECT_TRUE(has(p, "mt_data_loc(__ctx, args.op_str)"));
}

TEST(CGenerator, FindsTheRecordsExpressionsCastTo) {
  auto names = record_names_in({"((struct io_ring_ctx *)args.ctx)->rings", "(union  u*)x",
                                "map_get(m, k).structure", "mystruct x"});
  std::set<std::pair<std::string, std::string>> want = {{"struct", "io_ring_ctx"}, {"union", "u"}};
  EXPECT_EQ(names, want);
}

// A kernel struct a script casts to is defined from the running kernel's
// BTF with just the members it names, each at its offset in the kernel's
// layout, packed ones too, so that libbpf has no CO-RE relocation to
// search for; the C checks that layout, and names each struct's id for
// bpf_rdonly_cast.
TEST(CGenerator, DefinesKernelStructsCastToWithOnlyTheMembersNamedAtTheirOffsets) {
  if (!KernelBtf::get())
    GTEST_SKIP() << "no kernel BTF";
  // And a packed one: struct bvec_iter, 20 bytes with a __u64 first.
  Declaration d =
      testing::complete_declaration("1",
                                    "((struct io_ring_ctx *)args.ctx)->rings->cq.head + "
                                    "((struct bvec_iter *)args.ctx)->bi_sector");
  RunningKernel kernel;
  GeneratedProgram p = testing::generate_on(d, kernel);
  const struct btf *btf = KernelBtf::get()->raw();
  EXPECT_TRUE(has(p,
                  "struct bvec_iter {\n  union {\n    __u8 __mt_size[20];\n"
                  "    struct { __u64 bi_sector; };\n"
                  "  } __attribute__((packed));\n"
                  "} __attribute__((aligned(1), annotate(MT_KERNEL_RECORD)));\n"))
      << p.source;
  EXPECT_TRUE(has(p, "struct io_ring_ctx {\n  union {\n    __u8 __mt_size[")) << p.source;
  // Padded to its offset, which the compiler checks.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      p.source, m,
      std::regex(R"(struct \{ __u8 __mt_at_\d+\[(\d+)\]; struct io_rings \*rings; \};)")))
      << p.source;
  EXPECT_TRUE(has(p, "_Static_assert(__builtin_offsetof(struct io_ring_ctx, rings) == " +
                         m[1].str() + ", \"struct io_ring_ctx rings\");\n"))
      << p.source;
  EXPECT_TRUE(has(p, "} __attribute__((aligned(8), annotate(MT_KERNEL_RECORD)));\n")) << p.source;
  EXPECT_TRUE(has(p,
                  "struct io_uring {\n  union {\n    __u8 __mt_size[8];\n"
                  "    struct { __u32 head; };\n"))
      << p.source;
  EXPECT_FALSE(has(p, "preserve_access_index")) << p.source;
  int ctx_id = btf__find_by_name_kind(btf, "io_ring_ctx", BTF_KIND_STRUCT);
  EXPECT_TRUE(has(p, "struct io_ring_ctx *: " + std::to_string(ctx_id) + ",")) << p.source;
  CompileResult r = testing::compile_in_child(p.source, {});
  EXPECT_TRUE(r.ok) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
}

// Probes on one tracepoint share one program, which runs each in
// declaration order after one target check.
TEST(CGenerator, ProbesOnOneTracepointShareAProgram) {
  Declaration d = testing::complete_declaration("1", "args.res");
  d.probes.push_back(d.probes[0]);
  d.probes[1].id = 1;
  testing::FakeKernel kernel;
  GeneratedProgram p = testing::generate_on(d, kernel);
  ASSERT_EQ(p.probes.size(), 2u);
  EXPECT_EQ(p.probes[0].program, "mt_probe_0");
  EXPECT_EQ(p.probes[1].program, "mt_probe_1");
  EXPECT_EQ(p.probes[0].attached_program, "mt_shared_0");
  EXPECT_EQ(p.probes[1].attached_program, "mt_shared_0");
  EXPECT_TRUE(has(p,
                  "static __always_inline int mt_probe_0(struct mt_args_0 *__ctx, bool "
                  "__target, __u64 __pid_tgid) {\n  if (!__target)\n    return 0;\n"));
  EXPECT_TRUE(has(p,
                  "SEC(\"tracepoint/io_uring/io_uring_complete\")\nint mt_shared_0(void "
                  "*__ctx) {\n  if (mt_run_stopped())\n    return 0;\n  __u64 __pid_tgid = "
                  "mt_filter_targets ? bpf_get_current_pid_tgid() "
                  ": 0;\n  volatile __u8 __target = mt_is_target_task(__pid_tgid);\n  "
                  "mt_probe_0(__ctx, __target, __pid_tgid);\n  mt_probe_1(__ctx, __target, "
                  "__pid_tgid);\n  return 0;\n}\n"))
      << p.source;
  EXPECT_EQ(p.source.find("SEC(\"tracepoint/io_uring/io_uring_complete\")\nint mt_probe_"),
            std::string::npos);
}

// A drawn probe reads the clock once its filter passed: of the probes
// sharing a tracepoint, those that filter the event out pay no clock read.
TEST(CGenerator, DrawnProbeReadsTheClockAfterItsFilter) {
  Declaration d = testing::complete_declaration("args.res > 0", "args.res");
  d.probes[0].draws.push_back(DrawDecl{});
  testing::FakeKernel kernel;
  GeneratedProgram p = testing::generate_on(d, kernel);
  size_t filter = p.source.find("args.res > 0");
  size_t clock = p.source.find("__u64 __now = bpf_ktime_get_ns();");
  ASSERT_NE(clock, std::string::npos) << p.source;
  EXPECT_LT(filter, clock) << p.source;
  // A filter on the time reads it first.
  d.probes[0].predicate.text = "nsecs > 0";
  p = testing::generate_on(d, kernel);
  EXPECT_LT(p.source.find("__u64 nsecs = __now;"), p.source.find("nsecs > 0")) << p.source;
}

// A drawing of no argument (an instant, say) still sends its time and thread.
TEST(CGenerator, ADrawingWithoutArgumentsSendsARecord) {
  Declaration d = testing::complete_declaration("1", "args.res");
  d.probes[0].captures.clear();
  d.probes[0].has_handler = false;
  d.probes[0].draws.push_back(DrawDecl{});
  testing::FakeKernel kernel;
  GeneratedProgram p = testing::generate_on(d, kernel);
  ASSERT_FALSE(p.probes[0].record.empty()) << p.source;
  EXPECT_NE(p.source.find("mt_submit(__stage"), std::string::npos) << p.source;
}

// tp_btf probes on one event share a program as classic tracepoints do.
TEST(CGenerator, TpBtfProbesOnOneEventShareAProgram) {
  if (!KernelBtf::get())
    GTEST_SKIP() << "no kernel BTF";
  Declaration d = testing::complete_declaration("1", "(__u64)args.req");
  d.probes[0].alternatives = {"tp_btf:io_uring_complete"};
  d.probes.push_back(d.probes[0]);
  d.probes[1].id = 1;
  RunningKernel kernel;
  GeneratedProgram p = testing::generate_on(d, kernel);
  ASSERT_EQ(p.probes.size(), 2u);
  EXPECT_EQ(p.probes[0].attached_program, "mt_shared_0");
  EXPECT_EQ(p.probes[1].attached_program, "mt_shared_0");
  EXPECT_TRUE(has(p, "SEC(\"tp_btf/io_uring_complete\")\nint mt_shared_0(void *__ctx) {"))
      << p.source;
}

// The hand-over to the ring is a global function where the kernel's BTF
// tells it gives programs stacks of their own (6.13 on, x86-64), inlined
// elsewhere, and where a tail call takes them away.
TEST(CGenerator, HandsRecordsOverThroughAGlobalFunctionWhereTheKernelTakesIt) {
  Declaration d = testing::complete_declaration("1", "args.res");
  testing::FakeKernel without_btf;
  EXPECT_FALSE(has(testing::generate_on(d, without_btf), "#define MT_GLOBAL_FLUSH"));
  const KernelBtf *btf = KernelBtf::get();
  if (!btf)
    GTEST_SKIP() << "no kernel BTF";
  RunningKernel kernel;
  EXPECT_EQ(has(testing::generate_on(d, kernel), "#define MT_GLOBAL_FLUSH 1\n"),
            btf->enum_value("priv_stack_mode", "PRIV_STACK_ADAPTIVE").has_value() &&
                btf->has_member("struct", "pt_regs", "r15"));
  d.probes[0].action.text = "bpf_tail_call(__ctx, 0, 0);";
  EXPECT_FALSE(has(testing::generate_on(d, kernel), "#define MT_GLOBAL_FLUSH"));
}

// Hash maps (not per-CPU ones) allocate their entries on insert where the
// kernel's hash maps do so with bpf_mem_alloc, which tracing programs may
// use (6.1 on): they are made at start in half the time. Preallocated
// elsewhere.
TEST(CGenerator, HashMapsAllocateOnInsertWhereTheKernelAllowsIt) {
  Declaration d = testing::complete_declaration("1", "args.res");
  MapDecl m;
  m.name = "seen";
  m.kind = MapKind::Hash;
  m.key_type.text = "u32";
  m.value_type.text = "u64";
  m.size = 1024;
  d.maps.push_back(m);
  testing::FakeKernel without_btf;
  GeneratedProgram p = testing::generate_on(d, without_btf);
  EXPECT_FALSE(has(p, "#define MT_HASH_FLAGS"));
  EXPECT_TRUE(has(p, "  __uint(max_entries, 1024);\n  __uint(map_flags, MT_HASH_FLAGS);\n"))
      << p.source;
  // Per-CPU values allocated on insert fail in bursts of new keys.
  d.maps[0].kind = MapKind::PercpuHash;
  EXPECT_FALSE(has(testing::generate_on(d, without_btf), "map_flags, MT_HASH_FLAGS"));
  d.maps[0].kind = MapKind::Hash;
  const KernelBtf *btf = KernelBtf::get();
  if (!btf)
    GTEST_SKIP() << "no kernel BTF";
  RunningKernel kernel;
  EXPECT_EQ(has(testing::generate_on(d, kernel), "#define MT_HASH_FLAGS BPF_F_NO_PREALLOC\n"),
            btf->has_member("struct", "bpf_htab", "pcpu_ma"));
}

TEST(ProbeResolver, SuggestsNearestNames) {
  Declaration d = testing::complete_declaration("1", "1");
  d.probes[0].alternatives = {"tracepoint:io_uring:io_uring_compleet"};
  testing::FakeKernel kernel;
  try {
    resolve_probes(d, kernel);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.where.line, 3);
    EXPECT_NE(std::string(e.what()).find("did you mean tracepoint:io_uring:io_uring_complete"),
              std::string::npos)
        << e.what();
  }
}

TEST(ProbeResolver, FallsBackToTheNextAlternative) {
  Declaration d = testing::complete_declaration("1", "1");
  d.probes[0].alternatives = {"tracepoint:io_uring:io_uring_submit_req",
                              "tracepoint:io_uring:io_uring_complete"};
  testing::FakeKernel kernel;
  Resolution r = resolve_probes(d, kernel);
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_EQ(r.probes[0].name.target, "io_uring_complete");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("using tracepoint:io_uring:io_uring_complete"), std::string::npos);
}

TEST(ProbeResolver, ExpandsWildcards) {
  Declaration d = testing::complete_declaration("1", "1");
  d.probes[0].alternatives = {"tracepoint:io_uring:*"};
  testing::FakeKernel kernel;
  Resolution r = resolve_probes(d, kernel);
  // io_uring_create has no format in the fake kernel, so only one remains.
  ASSERT_EQ(r.probes.size(), 1u);
}

}  // namespace mt
