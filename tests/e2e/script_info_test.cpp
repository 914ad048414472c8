// script{} seen from the command line: each shipped script's --help, and a
// script whose requirements this kernel does not meet.
#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

// Each shipped script's --help starts with its name, version and the
// line `list` shows, and gives examples and what it requires.
TEST(E2eScriptInfo, EveryShippedScriptSaysWhatItIsInItsHelp) {
  auto list = run(mt({"list"}));
  ASSERT_EQ(list.exit_code, 0) << list;
  for (const auto &line : lines(list.out)) {
    std::string name = words(line)[0];
    std::string description = line.substr(line.find_first_not_of(' ', name.size()));
    auto r = run(mt({name, "--help"}));
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(lines(r.out)[0], name + " 1.0.0: " + description) << r;
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
  // --help still shows the script, and what this kernel lacks.
  auto help = run(mt({file, "--help"}));
  EXPECT_EQ(help.exit_code, 0) << help;
  EXPECT_TRUE(contains(help.out, "\nNot met on this kernel:\n  moontrace's script API 2")) << help;
}

}  // namespace
}  // namespace e2e
