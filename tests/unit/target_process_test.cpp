// Watching a -p process: it has exited once it is gone, zombie or reaped.
#include "run/target_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mt {
namespace {

TEST(TargetProcess, SeesTheProcessExit) {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  TargetProcess target(child);
  EXPECT_FALSE(target.exited());
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(target.exited());
}

TEST(TargetProcess, AProcessGoneBeforeItIsWatchedHasExited) {
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  int status;
  waitpid(child, &status, 0);
  EXPECT_TRUE(TargetProcess(child).exited());
}

}  // namespace
}  // namespace mt
