#include "compiler/c_generator.h"

#include <gtest/gtest.h>

#include "compiler/error.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

GeneratedProgram generate(const Declaration &d, Resolution &r) {
  testing::FakeKernel kernel;
  r = resolve_probes(d, kernel);
  GeneratorInput in;
  in.decl = &d;
  in.resolution = &r;
  return generate_c(in);
}

}  // namespace

TEST(CGenerator, PlacesExpressionsAtTheirScriptLines) {
  Declaration d = testing::complete_declaration("args.res >= param.min", "args.user_data");
  Resolution r;
  GeneratedProgram p = generate(d, r);
  // The expression sits on the line after #line, at its script column.
  EXPECT_NE(p.source.find("#line 4 \"test.lua\"\n            args.res >= param.min\n"),
            std::string::npos)
      << p.source;
  EXPECT_NE(p.source.find("#line 5 \"test.lua\"\n                   args.user_data\n"),
            std::string::npos);
  EXPECT_EQ(p.source.find("vmlinux.h"), std::string::npos);
}

TEST(CGenerator, LaysOutTracepointFieldsAtTheirOffsets) {
  Declaration d = testing::complete_declaration("1", "args.user_data");
  Resolution r;
  GeneratedProgram p = generate(d, r);
  EXPECT_NE(p.source.find("struct mt_args_0 {\n  __u8 __pad_0[8];\n  void *ctx;\n  void *req;\n"
                          "  __u64 user_data;\n  __s32 res;\n  __u32 cflags;\n"),
            std::string::npos)
      << p.source;
  EXPECT_NE(p.source.find("__u32 op_str;"), std::string::npos);
  EXPECT_NE(p.source.find("SEC(\"tracepoint/io_uring/io_uring_complete\")"), std::string::npos);
}

TEST(CGenerator, DeclaresParametersAsReadOnlyConstants) {
  Declaration d = testing::complete_declaration("args.res > param.min", "args.res");
  Resolution r;
  GeneratedProgram p = generate(d, r);
  EXPECT_EQ(p.params_struct, "mt_params");
  EXPECT_NE(p.source.find("struct mt_params {\n  __s64 min;\n};"), std::string::npos);
  EXPECT_NE(p.source.find("const volatile struct mt_params param"), std::string::npos);
}

TEST(CGenerator, DefinesOnlyTheBuiltinsAProbeUses) {
  Declaration d = testing::complete_declaration("pid != 1", "args.res");
  Resolution r;
  GeneratedProgram p = generate(d, r);
  EXPECT_NE(p.source.find("__u32 pid = bpf_get_current_pid_tgid() >> 32;"), std::string::npos);
  EXPECT_EQ(p.source.find("bpf_get_current_comm(comm"), std::string::npos);
}

TEST(CGenerator, CapturesDataLocFieldsAsStrings) {
  Declaration d = testing::complete_declaration("1", "args.op_str");
  Resolution r;
  GeneratedProgram p = generate(d, r);
  EXPECT_NE(p.source.find("char ud[64];"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("mt_data_loc(__ctx, args.op_str)"), std::string::npos);
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
