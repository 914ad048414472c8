// open_regular_file: a regular file opens; a FIFO (which would block), a
// device, a directory and a file of procfs do not, and none of them is
// opened to find out.
#include "common/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace mt {
namespace {

TEST(RegularFile, OnlyRegularFilesOpen) {
  char dir[] = "/tmp/mt-regular-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string fifo = std::string(dir) + "/fifo", file = std::string(dir) + "/file";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  FILE *f = fopen(file.c_str(), "w");
  ASSERT_TRUE(f);
  fputs("x", f);
  fclose(f);

  struct stat st {};
  EXPECT_TRUE(open_regular_file(file, &st));
  EXPECT_EQ(st.st_size, 1);
  // /proc/self/status is a regular file the kernel serves.
  for (const std::string &path :
       {fifo, std::string("/dev/null"), std::string(dir), std::string("/proc/self/status")}) {
    errno = 0;
    EXPECT_FALSE(open_regular_file(path)) << path;  // a FIFO would have blocked here
    EXPECT_EQ(errno, EINVAL) << path;
  }
  EXPECT_FALSE(open_regular_file(std::string(dir) + "/none"));
  EXPECT_EQ(errno, ENOENT);
  unlink(fifo.c_str());
  unlink(file.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace mt
