// The script environment: sandbox, require paths, script options.
#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

class E2eScripts : public BpfTest {};

TEST_F(E2eScripts, SandboxHidesUnsafeFunctions) {
  auto r = run(mt({script("sandbox.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out,
            "os=nil\nio=nil\nload=nil\nloadfile=nil\ndofile=nil\ndebug=nil\npackage.loadlib=nil\n")
      << r;
}

TEST_F(E2eScripts, UnsafeGivesThemBack) {
  auto r = run(mt({"--unsafe", script("sandbox.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out,
            "os=table\nio=table\nload=function\nloadfile=function\ndofile=function\ndebug=table\n"
            "package.loadlib=function\nos.execute=true\n")
      << r;
}

TEST_F(E2eScripts, RequireFindsStdlibSiblingAndMoontracePath) {
  Command c = mt({script("requires.lua")});
  c.env = {{"MOONTRACE_PATH", "/nonexistent:" + script("lib")}};
  auto r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "fmt=1.5K sibling=sibling shared=shared\n") << r;

  c.env = {{"MOONTRACE_PATH", ""}};
  r = run(c);
  EXPECT_TRUE(one_line_error(r, {"requires.lua:4: module 'shared' not found"}));
}

// Lua has no bytecode verifier: a precompiled chunk can break out of the
// sandbox, so neither a script nor a module may be one.
TEST_F(E2eScripts, SandboxRefusesBytecode) {
  TempDir dir;
  auto r = run(mt({"--unsafe", script("dump_bytecode.lua"), "--out", dir.file("chunk.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;

  auto refused = [](const Result &r) {
    return r.exit_code == 1 && !contains(r.out, "bytecode ran");
  };
  r = run(mt({dir.file("chunk.lua")}), 5s);
  EXPECT_TRUE(refused(r)) << "a precompiled script ran: " << r;
  r = run(mt({dir.write("uses_chunk.lua", "require 'chunk'\n")}), 5s);
  EXPECT_TRUE(refused(r)) << "a precompiled module ran: " << r;
}

TEST(E2eCli, ScriptHelpListsParameters) {
  auto r = run(mt({script("complete.lua"), "--help"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  for (const char *want : {"--min", "-m", "lowest user_data to show", "default: 0"})
    EXPECT_TRUE(contains(r.out, want)) << "missing '" << want << "'\n" << r;
}

}  // namespace
}  // namespace e2e
