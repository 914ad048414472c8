// The stage folders are layers: a file includes only from its own folder
// and the folders before it, so data flows one way (CMakeLists.txt links
// the stage libraries in the same order). bpf_headers/ comes first: its
// mt_abi.h is the contract every stage may read.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kStages = {"bpf_headers", "common", "kernel", "codegen", "compiler",
                                          "run",         "output", "trace",  "script",  "app"};

int stage_index(const std::string &folder) {
  auto it = std::find(kStages.begin(), kStages.end(), folder);
  return it == kStages.end() ? -1 : int(it - kStages.begin());
}

TEST(LayeringTest, EveryIncludeComesFromTheSameStageOrAnEarlierOne) {
  namespace fs = std::filesystem;
  const std::regex include_line(R"re(^\s*#\s*include\s+"([a-z_]+)/[^"]+")re");
  int files = 0;
  for (const std::string &stage : kStages) {
    fs::path dir = fs::path(MT_SOURCE_DIR) / stage;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    for (const auto &entry : fs::directory_iterator(dir)) {
      files += 1;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); n++) {
        std::smatch m;
        if (!std::regex_search(line, m, include_line))
          continue;
        int from = stage_index(m[1]);
        EXPECT_NE(from, -1) << entry.path().string() << ":" << n << " includes from " << m[1]
                            << ", which is not a stage folder";
        EXPECT_LE(from, stage_index(stage))
            << entry.path().string() << ":" << n << " includes from a later stage: " << line;
      }
    }
  }
  EXPECT_GT(files, 80);
}

// Every source file opens with a line saying its job, and one longer than
// about 500 lines says near its top why it is not cut up.
TEST(LayeringTest, EveryFileSaysItsJobAndWhyItIsLong) {
  namespace fs = std::filesystem;
  std::vector<std::string> folders = kStages;
  for (const char *more : {"scripts", "stdlib", "bench", "tests/unit", "tests/e2e"})
    folders.push_back(more);
  int files = 0;
  for (const std::string &folder : folders)
    for (const auto &entry : fs::recursive_directory_iterator(fs::path(MT_SOURCE_DIR) / folder)) {
      std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() ||
          (ext != ".cpp" && ext != ".h" && ext != ".lua" && ext != ".py"))
        continue;
      files += 1;
      std::ifstream in(entry.path());
      std::vector<std::string> lines;
      for (std::string line; std::getline(in, line);)
        lines.push_back(line);
      std::string first = lines.empty() ? "" : lines[0];
      if (first.rfind("#!", 0) == 0 && lines.size() > 1)
        first = lines[1];
      bool comment = first.rfind("//", 0) == 0 || first.rfind("/*", 0) == 0 ||
                     first.rfind("--", 0) == 0 || first.rfind("\"\"\"", 0) == 0 ||
                     first.rfind("#", 0) == 0;
      EXPECT_TRUE(comment) << entry.path().string() << " does not open with a line saying its job";
      if (lines.size() <= 520)
        continue;
      bool reason = false;
      for (size_t i = 0; i < lines.size() && i < 30; i++)
        reason |= lines[i].find("Over 500 lines") != std::string::npos;
      EXPECT_TRUE(reason) << entry.path().string() << " has " << lines.size()
                          << " lines and no \"Over 500 lines: why\" near its top";
    }
  EXPECT_GT(files, 150);
}

}  // namespace
