// Hands the detaching of probes to a child that outlives this process.
#include "run/bpf_teardown.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace mt {

void hand_bpf_teardown_to_a_child() {
  std::fflush(nullptr);
  pid_t parent = getpid();
  // Were the child to leave when the main thread has gone but another
  // thread has not yet closed the descriptors, the last copy of each link
  // would be this process's, and its exit would wait out the detaching
  // (1-2 s, one start in a score).
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, parent, 0));
  if (pidfd >= 0 && pidfd < 3) {  // started with 0-2 closed: the child closes those
    int above = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
    close(pidfd);
    pidfd = above;
  }
  if (fork() == 0) {
    for (int fd = 0; fd < 3; fd++)
      close(fd);  // whoever waits for our output's end must not wait for this
    wait_until_gone(parent, pidfd);
    _exit(0);
  }
  if (pidfd >= 0)
    close(pidfd);
}

void exit_leaving_teardown_behind(int code) {
  hand_bpf_teardown_to_a_child();
  _exit(code);
}

void wait_until_gone(pid_t pid, int pidfd) {
  struct pollfd p = {pidfd, POLLIN, 0};
  int ready = 0;
  while (pidfd >= 0 && (ready = poll(&p, 1, -1)) < 0 && errno == EINTR) {
  }
  if (ready == 1 && p.revents == POLLIN)
    return;
  while (getppid() == pid)
    usleep(1000);
}

}  // namespace mt
