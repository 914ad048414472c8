// A private directory for tests that set owners and modes (chown needs
// root), removed with everything in it at the end of the test.
#pragma once
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace mt {

// "Another user": nobody, who owns nothing here.
inline constexpr uid_t kOtherUser = 65534;

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "moontrace-unit-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    path_ = pattern;
    chmod(path_.c_str(), 0755);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  // Writes `text` to `name` (mode 0644), making its directories (0755).
  std::string write(const std::string &name, const std::string &text) const {
    std::string p = file(name);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    chmod(p.c_str(), 0644);
    return p;
  }
  std::string mkdir(const std::string &name, mode_t mode = 0755) const {
    std::string p = file(name);
    std::filesystem::create_directories(p);
    chmod(p.c_str(), mode);
    return p;
  }

 private:
  std::string path_;
};

inline std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline mode_t mode_of(const std::string &path) {
  struct stat st {};
  lstat(path.c_str(), &st);
  return st.st_mode & 07777;
}

// Tests that chown files to other users: they need root, and start as if
// no sudo were involved.
class ChownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "needs root to chown";
    unsetenv("SUDO_UID");
    unsetenv("SUDO_GID");
  }
};

}  // namespace mt
