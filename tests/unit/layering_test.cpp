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

}  // namespace
