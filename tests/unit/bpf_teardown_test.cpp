// The teardown child waits until the traced-from process has no thread
// left, not only until its main thread is gone.
#include "run/bpf_teardown.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace mt {
namespace {

void *linger(void *) {
  usleep(400 * 1000);
  return nullptr;
}

// A process whose main thread ends at once while another lives 400 ms
// more: it is gone only then.
TEST(BpfTeardown, WaitsForTheLastThreadNotTheMainOne) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    pthread_t thread;
    pthread_create(&thread, nullptr, linger, nullptr);
    char c = 1;
    (void)!write(ready[1], &c, 1);
    syscall(SYS_exit, 0);  // the main thread ends (no unwinding); the other goes on
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0)
    GTEST_SKIP() << "no pidfd_open: the teardown child waits for its parent to change";
  auto start = std::chrono::steady_clock::now();
  wait_until_gone(pid, pidfd);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(pidfd);
  waitpid(pid, nullptr, 0);
  EXPECT_GT(waited, 0.2) << "returned while the second thread was still there";
}

}  // namespace
}  // namespace mt
