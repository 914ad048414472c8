// script{}: what a script says of itself, shown by --help, and what it requires, checked first.
#include <gtest/gtest.h>

#include "common/error.h"
#include "script/script_params.h"
#include "stage_fixtures.h"

namespace mt {

namespace {

// The lines of the error declaring `text` on the fake kernel gives, or none.
std::vector<std::string> declare_error(const std::string &text,
                                       std::vector<std::string> argv = {}) {
  testing::FakeKernel kernel;
  testing::LoadedScript l(text, std::move(argv));
  l.script.set_kernel_facts(&kernel);
  try {
    l.script.declare();
  } catch (const Error &e) {
    std::vector<std::string> lines = {e.what()};
    lines.insert(lines.end(), e.more_lines.begin(), e.more_lines.end());
    return lines;
  }
  return {};
}

}  // namespace

// Optional probes are names, each checked as one: "A or B" was taken for a
// name, and `check` said it was malformed.
TEST(ScriptInfo, OptionalProbesMustBeProbeNames) {
  auto lines = declare_error(
      "script{ name = \"x\", description = \"x\",\n"
      "  requires = { optional = { \"kprobe:a or fentry:a\" } } }\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("script{} requires optional: malformed probe 'kprobe:a or fentry:a'"),
            std::string::npos)
      << lines[0];
}

TEST(ScriptInfo, IsKeptForHelpWithWhatItRequires) {
  testing::FakeKernel kernel;
  testing::LoadedScript l(R"(script{
  name = "done", version = "1.2.0", description = "every completion",
  help = "One line each.",
  examples = { "moontrace done", "moontrace done --min 3" },
  requires = { api = 1, kernel = "5.4", probes = { "tracepoint:io_uring:io_uring_complete",
               { "kprobe:nope", "tracepoint:io_uring:io_uring_complete" } },
               optional = { "kprobe:io_issue_sqe" } },
}
param("min", { type = "int", default = 0, help = "smallest result" })
)");
  l.script.set_kernel_facts(&kernel);
  l.script.declare();
  const auto &scripts = l.script.declaration().scripts;
  ASSERT_EQ(scripts.size(), 1u);
  const ScriptInfo &info = scripts[0];
  EXPECT_EQ(info.path, "t.lua");
  EXPECT_EQ(info.name, "done");
  EXPECT_EQ(info.version, "1.2.0");
  EXPECT_EQ(info.examples.size(), 2u);
  EXPECT_TRUE(info.unmet.empty());
  EXPECT_EQ(info.requirements,
            (std::vector<std::string>{"moontrace script API 1", "Linux 5.4 or later",
                                      "tracepoint:io_uring:io_uring_complete",
                                      "kprobe:nope or tracepoint:io_uring:io_uring_complete"}));
  std::string help = params_help("done", l.script.declaration().params, &info);
  EXPECT_EQ(help.rfind("done 1.2.0: every completion\n\nOne line each.\n\nusage: ", 0), 0u) << help;
  for (const char *part :
       {"  --min int", "\nExamples:\n  moontrace done\n  moontrace done --min 3\n",
        "\nRequires:\n  moontrace script API 1\n",
        "\nUses where the kernel has them:\n  kprobe:io_issue_sqe\n"})
    EXPECT_NE(help.find(part), std::string::npos) << part << "\n" << help;
  EXPECT_EQ(help.find("Not met"), std::string::npos) << help;
}

TEST(ScriptInfo, EachUnmetRequirementIsALineOfTheErrorBeforeTheRestRuns) {
  auto e = declare_error(R"(-- needs more than this kernel has
script{ description = "x", requires = { api = 99, kernel = "6.1", features = { "kprobes" },
        probes = { "tracepoint:io_uring:io_uring_complete", "tracepoint:io_uring:nope" } } }
error("the rest ran")
)");
  EXPECT_EQ(e, (std::vector<std::string>{
                   "t.lua:2: needs moontrace's script API 99; this moontrace has 1 (a newer "
                   "moontrace runs it)",
                   "t.lua:2: needs Linux 6.1 or later; this kernel is 5.10.0-test",
                   "t.lua:2: needs kprobes: no kprobes (CONFIG_KPROBES)",
                   "t.lua:2: needs tracepoint:io_uring:nope: no such tracepoint"}));
}

// Under --help, a script{} whose requirements are not met ends the
// declaration: what follows may need them (here, it fails).
TEST(ScriptInfo, HelpStopsAtWhatIsNotMetAndShowsIt) {
  testing::FakeKernel kernel;
  testing::LoadedScript l(R"(script{ description = "x", requires = { features = { "fentry" } } }
error("the rest ran")
)");
  l.script.set_kernel_facts(&kernel);
  l.script.set_help(true);
  l.script.declare();
  const ScriptInfo &info = l.script.declaration().scripts.at(0);
  EXPECT_EQ(info.unmet, (std::vector<std::string>{"fentry: refused"}));
  std::string help = params_help("t.lua", {}, &info);
  EXPECT_NE(help.find("\nNot met on this kernel (so the script stopped there, and may have more "
                      "options):\n  fentry: refused\n"),
            std::string::npos)
      << help;
}

// The further lines belong to script{}'s own error: a script that caught
// it and failed later gets one line.
TEST(ScriptInfo, ACaughtRequirementErrorLeavesNoLinesBehind) {
  EXPECT_EQ(declare_error(R"(pcall(script, { description = "x", requires = { api = 9,
    features = { "kprobes" } } })
error("later")
)"),
            std::vector<std::string>{"t.lua:3: later"});
}

TEST(ScriptInfo, MistakesAreErrorsAtTheirLine) {
  EXPECT_EQ(declare_error("script{ description = 'x', descripton = 'y' }"),
            std::vector<std::string>{"t.lua:1: script{}: unknown field 'descripton'"});
  EXPECT_EQ(declare_error("script{ description = 'x', requires = { probe = {} } }"),
            std::vector<std::string>{"t.lua:1: script{} requires: unknown field 'probe'"});
  EXPECT_EQ(declare_error("script{ name = 'x' }"),
            std::vector<std::string>{"t.lua:1: script{}: description (one line) is required"});
  EXPECT_EQ(declare_error("script{ description = 'two\\nlines' }"),
            std::vector<std::string>{"t.lua:1: script{}: description is one line"});
  EXPECT_EQ(declare_error("script{ description = 'x', version = 'one' }"),
            std::vector<std::string>{"t.lua:1: script{}: version 'one' is not like 1.2.0"});
  EXPECT_EQ(
      declare_error("script{ description = 'x', requires = { kernel = 'new' } }"),
      std::vector<std::string>{"t.lua:1: script{} requires: kernel 'new' is not like \"5.10\""});
  EXPECT_EQ(
      declare_error("script{ description = 'x', requires = { features = { 'gpu' } } }"),
      std::vector<std::string>{
          "t.lua:1: script{}: unknown feature 'gpu' (btf, kprobes, fentry, kprobes_or_fentry)"});
  // Long text is refused before a pattern could recurse through it.
  EXPECT_EQ(declare_error("script{ description = 'x', version = '1' .. ('.1'):rep(30000) }").size(),
            1u);
  EXPECT_EQ(
      declare_error("script{ description = 'x', requires = { kernel = '1' .. ('0'):rep(99999) } }")
          .size(),
      1u);
  EXPECT_EQ(declare_error("script{ description = 'x' }\nscript{ description = 'y' }"),
            std::vector<std::string>{"t.lua:2: script{} is called once per script"});
}

}  // namespace mt
