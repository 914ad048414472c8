// The script environment: sandbox, require paths, script options.
#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

TEST_F(BpfTest, SandboxHidesUnsafeFunctions) {
  auto r = run(mt({script("sandbox.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "os=nil\nio=nil\nload=nil\nloadfile=nil\ndofile=nil\ndebug=nil\npackage.loadlib=nil\n") << r;
}

TEST_F(BpfTest, UnsafeGivesThemBack) {
  auto r = run(mt({"--unsafe", script("sandbox.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out,
            "os=table\nio=table\nload=function\nloadfile=function\ndofile=function\ndebug=table\n"
            "package.loadlib=function\nos.execute=true\n")
      << r;
}

TEST_F(BpfTest, RequireFindsStdlibSiblingAndMoontracePath) {
  Command c = mt({script("requires.lua")});
  c.env = {{"MOONTRACE_PATH", "/nonexistent:" + script("lib")}};
  auto r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "fmt=1.5K sibling=sibling shared=shared\n") << r;

  c.env = {{"MOONTRACE_PATH", ""}};
  r = run(c);
  EXPECT_TRUE(one_line_error(r, {"requires.lua:4", "shared"}));
}

TEST(Cli, ScriptHelpListsParameters) {
  auto r = run(mt({script("complete.lua"), "--help"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  for (const char *want : {"--min", "-m", "lowest user_data to show", "default: 0"})
    EXPECT_TRUE(contains(r.out, want)) << "missing '" << want << "'\n" << r;
}

}  // namespace
}  // namespace e2e
