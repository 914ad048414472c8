// The process tree from /proc: -p's process with the children it has, and
// a thread told from its process.
#include "run/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/waiting_thread.h"

namespace mt {
namespace {

bool holds(const std::vector<int> &pids, int pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

TEST(ProcessTree, FindsChildrenAndTheirChildren) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t child = fork();
  if (child == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      pause();
      _exit(0);
    }
    (void)!write(pipe_fds[1], &grandchild, sizeof grandchild);
    pause();
    _exit(0);
  }
  pid_t grandchild = 0;
  ASSERT_EQ(read(pipe_fds[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
  std::vector<int> below = process_subtree(getpid());
  EXPECT_EQ(below.front(), getpid());
  EXPECT_TRUE(holds(below, child));
  EXPECT_TRUE(holds(below, grandchild));
  EXPECT_FALSE(holds(process_subtree(child), getpid()));
  kill(grandchild, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

// A name may hold ") " and digits: the parent is read after the last ')'.
// A tree read while pids are reused may loop: each process comes once.
TEST(ProcessTree, ReadsNamesThatLookLikeFieldsAndLoops) {
  auto dir = std::filesystem::temp_directory_path() / ("proc_tree_" + std::to_string(getpid()));
  auto stat = [&](int pid, const std::string &line) {
    std::filesystem::create_directories(dir / std::to_string(pid));
    std::ofstream(dir / std::to_string(pid) / "stat") << line;
  };
  stat(10, "10 (init) S 1 10 10");
  stat(11, "11 (a) S 1) S 99 (b) S 10 11 11");
  stat(12, "12 (c) S 11 12 12");
  stat(13, "13 (d) S 12 13 13");
  stat(10, "10 (init) S 13 10 10");
  std::vector<int> below = process_subtree(10, dir.string());
  std::sort(below.begin(), below.end());
  EXPECT_EQ(below, (std::vector<int>{10, 11, 12, 13}));
  EXPECT_EQ(process_subtree(99, dir.string()), std::vector<int>{99});
  std::filesystem::remove_all(dir);
}

TEST(ProcessTree, AThreadIsToldFromItsProcess) {
  EXPECT_EQ(thread_group_of(getpid()), getpid());
  {
    testing::WaitingThread thread;
    EXPECT_EQ(thread_group_of(thread.tid()), getpid());
  }
  EXPECT_EQ(thread_group_of(-5), -1);
}

}  // namespace
}  // namespace mt
