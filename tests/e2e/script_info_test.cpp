// script{} seen from the command line: each shipped script's --help, and a
// script whose requirements this kernel does not meet.
#include <unistd.h>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

// Each shipped script's --help starts with its name, version and the
// line `list` shows, and gives examples and what it requires.
TEST(E2eScriptInfo, EveryShippedScriptSaysWhatItIsInItsHelp) {
  auto list = run(mt({"list"}));
  ASSERT_EQ(list.exit_code, 0) << list;
  for (const auto &line : lines(list.out)) {
    auto w = words(line);
    std::string name = w[0], version = w[1];
    size_t start = line.find(version, name.size()) + version.size();
    start = line.find_first_not_of(' ', start);
    std::string description = line.substr(start, line.rfind("  [shipped]") - start);
    auto r = run(mt({name, "--help"}));
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(lines(r.out)[0], name + " " + version + ": " + description) << r;
    EXPECT_TRUE(contains(r.out, "\nExamples:\n  ")) << r;
    EXPECT_TRUE(contains(r.out, "\nRequires:\n  moontrace script API 1\n")) << r;
    EXPECT_FALSE(contains(r.out, "Not met")) << r;
  }
}

// What a script requires is checked before the rest of it runs, and
// before anything compiles: each unmet requirement is one line.
TEST(E2eScriptInfo, UnmetRequirementsAreLinesBeforeAnythingCompiles) {
  TempDir dir;
  std::string file = dir.file("needs.lua");
  dir.write("needs.lua", R"(-- needs what no kernel has
script{ description = "x", requires = { api = 2, probes = { "tracepoint:nope:nope" } } }
probe("tracepoint:io_uring:io_uring_complete", { filter = "this is not C" })
)");
  auto r = run(mt({file}));
  EXPECT_NE(r.exit_code, 0) << r;
  EXPECT_EQ(r.err_lines(),
            (std::vector<std::string>{
                "moontrace: " + file +
                    ":2: needs moontrace's script API 2; this moontrace has 1 "
                    "(a newer moontrace runs it)",
                "moontrace: " + file + ":2: needs tracepoint:nope:nope: no such tracepoint"}))
      << r;
  // --help still shows the script, and what this kernel lacks, also of
  // a module it requires (whose script{} stops it there).
  dir.write("team.lua", "script{ description = 'a module', requires = { api = 3 } }\n");
  dir.write("uses.lua",
            "script{ description = 'uses a module' }\nrequire 'team'\nerror('ran on')\n");
  auto uses = run(mt({dir.file("uses.lua"), "--help"}));
  EXPECT_EQ(uses.exit_code, 0) << uses;
  EXPECT_TRUE(contains(uses.out, "uses.lua: uses a module\n")) << uses;
  EXPECT_TRUE(contains(uses.out, "  " + dir.file("team.lua") + ": moontrace's script API 3"))
      << uses;
  auto help = run(mt({file, "--help"}));
  EXPECT_EQ(help.exit_code, 0) << help;
  EXPECT_TRUE(contains(help.out,
                       "\nNot met on this kernel (so the script stopped there, and may "
                       "have more options):\n  moontrace's script API 2"))
      << help;
}

// Two teams' directories on MOONTRACE_PATH: a script runs by name with its
// options, using a module of the other team's; `list` shows where each is;
// a name found twice runs the first and says which it hides.
class E2eScriptSearch : public BpfTest {};

TEST_F(E2eScriptSearch, ScriptsOnTheSearchPathRunByNameAndAreListed) {
  TempDir a, b;
  a.write("team_io.lua", R"(-- team_io: the team's io script
script{ name = "team_io", version = "0.3", description = "what the team's io does" }
local shared = require "teamlib"
local n = param("n", { type = "int", default = 1, help = "how many" })
probe("begin", function() printf("%s %d\n", shared.greeting, n) exit() end)
)");
  a.write("demo.lua",
          "script{ description = 'the team demo' }\nprobe('begin', function() "
          "print('team demo') exit() end)\n");
  b.write("teamlib.lua", "return { greeting = 'hello from b' }\n");
  a.write("evil\x1b[2J.lua", "script{ description = 'x' }\n");
  ASSERT_EQ(symlink("/dev/null", a.file("watch.lua").c_str()), 0);
  b.write("team_io.lua", "script{ description = 'b has one too' }\n");
  std::string path = a.path().string() + ":" + b.path().string();

  Command c = mt({"team_io", "--n", "2"});
  c.env = {{"MOONTRACE_PATH", path}};
  auto r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "hello from b 2\n") << r;
  EXPECT_EQ(r.err_lines(), std::vector<std::string>{"moontrace: running " + a.file("team_io.lua") +
                                                    ", which hides " + b.file("team_io.lua") +
                                                    " (run that by its path)"})
      << r;

  c = mt({"demo"});
  c.env = {{"MOONTRACE_PATH", path}};
  r = run(c);
  EXPECT_EQ(r.out, "team demo\n") << r;
  EXPECT_TRUE(contains(r.err, "which hides scripts/demo.lua")) << r;

  c = mt({"list"});
  c.env = {{"MOONTRACE_PATH", path}};
  r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  // A name that would drive the terminal is shown tamed; a device is
  // listed without being opened, and refused when run.
  EXPECT_TRUE(contains(r.out, "evil?[2J ")) << r;
  EXPECT_FALSE(contains(r.out, "\x1b")) << r;
  EXPECT_TRUE(contains(r.out, "watch        -          [" + a.file("watch.lua") + "]\n")) << r;
  c = mt({"watch"});
  c.env = {{"MOONTRACE_PATH", path}};
  EXPECT_TRUE(one_line_error(run(c), {"'" + a.file("watch.lua") + "' is a character device"}));
  for (const std::string &line :
       {"team_io      0.3      what the team's io does  [" + a.file("team_io.lua") + "]\n",
        "team_io      -        b has one too  [" + b.file("team_io.lua") + ", hidden by " +
            a.file("team_io.lua") + "]\n",
        "demo         -        the team demo  [" + a.file("demo.lua") + "]\n",
        "demo         1.0.0    every io_uring completion of the traced program, with its result  "
        "[shipped, hidden by " +
            a.file("demo.lua") + "]\n"})
    EXPECT_TRUE(contains(r.out, line)) << line << r;
}

}  // namespace
}  // namespace e2e
