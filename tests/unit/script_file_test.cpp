// Reading a script from disk: regular files only, and at most 16 MiB.
#include "script/script_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace mt {
namespace {

std::string message_of(const std::string &path, size_t max = kMaxScriptBytes) {
  try {
    read_script_file(path, max);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

class ScriptFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/script_file_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ScriptFile, ReadsARegularFileWhole) {
  std::string path = dir_ + "/s.lua";
  std::ofstream(path) << "print(1)\n";
  EXPECT_EQ(read_script_file(path), std::optional<std::string>("print(1)\n"));
}

TEST_F(ScriptFile, NothingWhenThereIsNoFile) {
  EXPECT_EQ(read_script_file(dir_ + "/missing.lua"), std::nullopt);
  EXPECT_EQ(read_script_file(dir_ + "/missing/dir.lua"), std::nullopt);
}

TEST_F(ScriptFile, RefusesWhatIsNotARegularFile) {
  EXPECT_EQ(message_of(dir_), "'" + dir_ + "' is a directory, not a script file");
  EXPECT_EQ(message_of("/dev/zero"), "'/dev/zero' is a character device, not a script file");
  std::string fifo = dir_ + "/fifo.lua";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(message_of(fifo), "'" + fifo + "' is a FIFO, not a script file");
}

TEST_F(ScriptFile, RefusesAFileOverTheLimit) {
  std::string path = dir_ + "/big.lua";
  std::ofstream(path) << std::string((1 << 20) + 1, ' ');
  EXPECT_EQ(message_of(path, 1 << 20),
            "script '" + path + "' is larger than 1 MiB; a script is Lua source");
  EXPECT_EQ(read_script_file(path, 2 << 20)->size(), (1u << 20) + 1);
}

// Files in /proc say they are empty; they are read to their end anyway.
TEST_F(ScriptFile, ReadsFilesThatClaimToBeEmpty) {
  auto text = read_script_file("/proc/self/status");
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("Name:"), std::string::npos);
}

}  // namespace
}  // namespace mt
