// The command line: values, options given twice, and what is refused.
#include "app/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"

namespace mt {
namespace {

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "moontrace");
  std::vector<char *> argv;
  for (auto &a : args)
    argv.push_back(a.data());
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(Cli, DurationIsSecondsUpToAYear) {
  EXPECT_DOUBLE_EQ(parse({"--duration", "2.5", "demo"}).duration, 2.5);
  EXPECT_DOUBLE_EQ(parse({"--duration=31536000", "demo"}).duration, 31536000);
  EXPECT_DOUBLE_EQ(parse({"--duration", "1e-3", "demo"}).duration, 0.001);
  for (std::string bad :
       {"nan", "-nan", "inf", "-inf", "0", "-1", "31536001", "1e400", "5s", "", " ", "0x"})
    EXPECT_EQ(error_of({"--duration", bad, "demo"}),
              "invalid duration '" + bad +
                  "' for --duration: expected seconds, more than 0 and at most 31536000 (a year)")
        << bad;
}

TEST(Cli, OptionsWithAValueAreGivenOnce) {
  EXPECT_EQ(error_of({"-c", "true", "--command", "false", "demo"}),
            "option --command is given twice; give it once");
  EXPECT_EQ(error_of({"-o", "a", "-o", "a", "demo"}), "option -o is given twice; give it once");
  EXPECT_EQ(error_of({"--duration", "1", "--duration", "1", "demo"}),
            "option --duration is given twice; give it once");
  EXPECT_EQ(error_of({"-f", "json", "--format=json", "demo"}),
            "option --format is given twice; give it once");
  EXPECT_EQ(error_of({"-p", "1", "--pid", "1", "demo"}),
            "option --pid is given twice; give it once");
  // Flags may repeat: -v -v is more verbose.
  EXPECT_EQ(parse({"-v", "-v", "demo"}).verbose, 2);
}

TEST(Cli, CommandMustHaveAWord) {
  EXPECT_EQ(error_of({"-c", "", "demo"}), "option -c needs a command to run, not ''");
  EXPECT_EQ(error_of({"-c", " \t", "demo"}), "option -c needs a command to run, not ' \t'");
  EXPECT_EQ(error_of({"-c", "echo \"x", "demo"}), "unterminated quote in command: echo \"x");
  EXPECT_EQ(parse({"-c", "''", "demo"}).command, "''");  // one empty word: exec says why
}

TEST(Cli, PidIsAPositiveInt) {
  EXPECT_EQ(parse({"-p", "1", "demo"}).pid, 1);
  for (std::string bad : {"0", "-5", "12x", "", "99999999999", "2147483648"})
    EXPECT_EQ(error_of({"-p", bad, "demo"}), "invalid pid '" + bad + "' for -p") << bad;
}

TEST(Cli, ScriptsJoinedByPlusEachHaveTheirOptions) {
  Options o = parse(
      {"-o", "t.fxt", "uring", "--sample", "10", "+", "blk.lua", "-d", "sda", "+", "iostack"});
  EXPECT_EQ(o.script, "uring");
  EXPECT_EQ(o.script_args, (std::vector<std::string>{"--sample", "10"}));
  ASSERT_EQ(o.more_scripts.size(), 2u);
  EXPECT_EQ(o.more_scripts[0].script, "blk.lua");
  EXPECT_EQ(o.more_scripts[0].args, (std::vector<std::string>{"-d", "sda"}));
  EXPECT_EQ(o.more_scripts[1].script, "iostack");
  EXPECT_TRUE(o.more_scripts[1].args.empty());
  EXPECT_THROW(parse({"uring", "+"}), Error);
}

TEST(Cli, ListNamesEachScriptWithItsVersionDescriptionAndPlace) {
  std::string text = scripts_text(all_scripts());
  EXPECT_NE(text.find("\nuring        1.0.0    how each io_uring request travels through the "
                      "kernel, for Perfetto  [shipped]\n"),
            std::string::npos)
      << text;
  // One hidden by another of its name, earlier on the search path.
  EXPECT_EQ(scripts_text({{"demo", "/team/demo.lua", false, "", "the team's"},
                          {"demo", "scripts/demo.lua", true, "1.0.0", "every completion"}}),
            "demo         -        the team's  [/team/demo.lua]\n"
            "demo         1.0.0    every completion  [shipped, hidden by /team/demo.lua]\n");
}

}  // namespace
}  // namespace mt
