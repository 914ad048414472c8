// Runs the catalogue of bad inputs and faults (catalogue.h).
#include "tests/e2e/catalogue.h"

#include <filesystem>
#include <sstream>

namespace e2e {

namespace fs = std::filesystem;

const std::map<std::string, std::string> kPrecious = {
    {"uring.fxt", "an earlier run's trace"},
    {"trace.fxt", "an earlier run's trace"},
    {"out.txt", "an earlier run's output"},
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.name;
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name;
}

namespace {

// The line of uring.lua that declares its trace file, where errors about
// that file point.
std::string uring_fxt_line() {
  std::istringstream in(read_file(MT_SOURCE_DIR "/scripts/uring.lua"));
  std::string line;
  for (int n = 1; std::getline(in, line); n++)
    if (line.rfind("fxt{", 0) == 0)
      return std::to_string(n);
  return "?";
}

std::string substitute(std::string text, const std::string &dir) {
  for (size_t at; (at = text.find("{dir}")) != std::string::npos;)
    text.replace(at, 5, dir);
  for (size_t at; (at = text.find("{uring_fxt_line}")) != std::string::npos;)
    text.replace(at, 16, uring_fxt_line());
  return text;
}

// Every regular file under `dir` (but the object cache) and its content.
std::map<std::string, std::string> snapshot(const std::string &dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string name = fs::relative(it->path(), dir).string();
    if (name.rfind("cache", 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink())
      files[name] = "-> " + fs::read_symlink(it->path()).string();
    else if (it->is_regular_file())
      files[name] = read_file(it->path().string());
  }
  return files;
}

}  // namespace

TEST_P(Catalogue, FailsCleanly) {
  const Case &c = GetParam();
  TempDir dir;
  std::string d = dir.path().string();
  for (const auto &[name, text] : kPrecious)
    dir.write(name, text);
  for (const auto &[name, text] : c.files)
    dir.write(name, substitute(text, d));
  if (c.setup)
    c.setup(d);
  auto before = snapshot(d);

  Command command;
  for (const auto &a : c.args)
    command.argv.push_back(substitute(a, d));
  command = mt(command.argv);
  command.cwd = d;
  for (const auto &[k, v] : c.env)
    command.env.push_back({k, substitute(v, d)});
  Result r;
  if (c.while_running) {
    Process p(command);
    ASSERT_TRUE(p.wait_for_err(kReady)) << p.wait(1s);
    c.while_running(p);
    r = p.wait(std::chrono::seconds(c.timeout_s));
  } else {
    r = run(command, std::chrono::seconds(c.timeout_s));
  }

  EXPECT_FALSE(r.timed_out) << r;
  EXPECT_EQ(r.exit_code, c.exit_code) << r;
  auto errors = r.err_lines();
  if (c.error.empty())
    EXPECT_TRUE(errors.empty()) << r;
  else if (errors.empty())
    ADD_FAILURE() << "expected the error line\n  " << substitute(c.error, d) << "\ngot " << r;
  else
    EXPECT_EQ(errors[0], substitute(c.error, d)) << r;

  auto after = snapshot(d);
  for (const auto &[name, text] : before)
    if (!c.may_write.count(name)) {
      auto it = after.find(name);
      if (it == after.end())
        ADD_FAILURE() << name << " was lost";
      else
        EXPECT_EQ(it->second, text) << name << " was changed";
    }
  for (const auto &[name, text] : after)
    if (!before.count(name) && !c.may_write.count(name))
      ADD_FAILURE() << name << " was left behind";
  if (c.check)
    c.check(r, d);
}

}  // namespace e2e
