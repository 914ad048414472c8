// A standard descriptor moontrace starts without is held, so that no file
// opened later takes its number (app/standard_fds.h).
#include "app/standard_fds.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace mt {
namespace {

// In a child, with FD closed: 0 when it is held afterwards, still refusing
// (reads from stdin, writes to the others), and the next file opened gets
// another number.
int held_in_child(int fd) {
  pid_t pid = fork();
  if (pid == 0) {
    close(fd);
    hold_closed_standard_fds();
    int next = open("/dev/null", O_RDONLY);
    char byte;
    bool refuses = fd == STDIN_FILENO ? read(fd, &byte, 1) == -1 && errno == EBADF
                                      : write(fd, "x", 1) == -1 && errno == EBADF;
    _exit(fcntl(fd, F_GETFD) != -1 && next > STDERR_FILENO && refuses ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

TEST(StandardFds, AClosedOneIsHeldAndStillRefuses) {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    EXPECT_EQ(held_in_child(fd), 0) << "fd " << fd;
}

TEST(StandardFds, OpenOnesAreLeftAlone) {
  int before = fcntl(STDERR_FILENO, F_GETFL);
  hold_closed_standard_fds();
  EXPECT_EQ(fcntl(STDERR_FILENO, F_GETFL), before);
  int next = open("/dev/null", O_RDONLY);
  EXPECT_GT(next, STDERR_FILENO);
  close(next);
}

}  // namespace
}  // namespace mt
