#include "compiler/clang_compiler.h"

#include <gtest/gtest.h>

#include <cstring>

#include "stage_fixtures.h"

namespace mt {

namespace {

bool has_section(const std::vector<char> &elf, const char *name) {
  // Section names live in the string table; a plain search is enough here.
  std::string bytes(elf.begin(), elf.end());
  return bytes.find(name) != std::string::npos;
}

}  // namespace

TEST(ClangCompiler, EmitsABpfObjectWithBtf) {
  CompileResult r =
      compile_bpf(testing::generate_complete("args.res >= param.min", "args.user_data").source, {});
  ASSERT_TRUE(r.ok) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  ASSERT_GT(r.object.size(), 64u);
  EXPECT_EQ(std::memcmp(r.object.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  EXPECT_EQ(static_cast<unsigned char>(r.object[18]), 247);  // e_machine EM_BPF
  EXPECT_TRUE(has_section(r.object, ".BTF"));
  EXPECT_TRUE(has_section(r.object, "tracepoint/io_uring/io_uring_complete"));
  EXPECT_TRUE(has_section(r.object, "mt_rec_0"));
}

TEST(ClangCompiler, ReportsErrorsAtTheScriptColumn) {
  CompileResult r =
      compile_bpf(testing::generate_complete("args.nosuch > 1", "args.res").source, {});
  ASSERT_FALSE(r.ok);
  ASSERT_FALSE(r.diagnostics.empty());
  const CompileDiagnostic &d = r.diagnostics[0];
  EXPECT_TRUE(d.is_error);
  EXPECT_EQ(d.file, "test.lua");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 18);  // the member name inside "args.nosuch" at column 13
  EXPECT_NE(d.message.find("nosuch"), std::string::npos);
}

}  // namespace mt
