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

  // A module the stdlib hides, and one another directory's hides, are
  // reported at the require's line.
  TempDir team, other;
  team.write("fmt.lua", "return { bytes = function() return 'team' end }\n");
  team.write("shared.lua", "return { name = 'team' }\n");
  other.write("shared.lua", "return { name = 'other' }\n");
  c.env = {{"MOONTRACE_PATH", team.path().string() + ":" + other.path().string()}};
  r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "fmt=1.5K sibling=sibling shared=team\n") << r;
  std::string at = "moontrace: " + script("requires.lua");
  EXPECT_EQ(r.err_lines(),
            (std::vector<std::string>{
                at + ":2: require 'fmt' gets moontrace's own stdlib/fmt.lua, which hides " +
                    team.file("fmt.lua"),
                at + ":4: require 'shared' gets " + team.file("shared.lua") + ", which hides " +
                    other.file("shared.lua")}))
      << r;

  // A module found nowhere: the line says where it looked.
  c.env = {{"MOONTRACE_PATH", ""}};
  r = run(c);
  EXPECT_TRUE(one_line_error(r, {"requires.lua:4: module 'shared' not found: ",
                                 "no built-in module 'shared'; no file '" + script("shared.lua") +
                                     "'; no file '" + script("shared/init.lua") + "'"}));
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
