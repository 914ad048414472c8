// The teardown child waits until the traced-from process has no thread
// left, not only until its main thread is gone.
#include "run/bpf_teardown.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace mt {
namespace {

int release[2];

void *linger(void *) {
  char c;
  (void)!read(release[0], &c, 1);
  return nullptr;
}

// A process whose main thread ends at once while another lives on until
// released: it is gone only then.
TEST(BpfTeardown, WaitsForTheLastThreadNotTheMainOne) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(release[1]);  // the test's end: closed, it releases the thread
    pthread_t thread;
    pthread_create(&thread, nullptr, linger, nullptr);
    char c = 1;
    (void)!write(ready[1], &c, 1);
    syscall(SYS_exit, 0);  // the main thread ends (no unwinding); the other goes on
  }
  close(ready[1]);
  close(release[0]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0)
    GTEST_SKIP() << "no pidfd_open: the teardown child waits for its parent to change";
  std::atomic<bool> returned = false;
  std::thread waiter([&] {
    wait_until_gone(pid, pidfd);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(returned) << "returned while the second thread was still there";
  close(release[1]);  // the second thread ends, and the process with it
  waiter.join();
  EXPECT_TRUE(returned);
  close(pidfd);
  waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace mt
