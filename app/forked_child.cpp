// Forks a child for a piece of work and reads its answer from a pipe; reaps children.
#include "app/forked_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/error.h"
#include "common/write_all.h"

namespace mt {

ForkedChild::ForkedChild(const std::function<std::string()> &work) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot start a child process: pipe: ") + std::strerror(errno));
  pid_t parent = getpid();
  std::fflush(nullptr);
  pid_ = fork();
  if (pid_ < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw Error(std::string("cannot start a child process: fork: ") + std::strerror(err));
  }
  if (pid_ == 0) {
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(1);  // the parent is already gone
    try {
      _exit(write_all(fds[1], work()) ? 0 : 1);
    } catch (const ExitStatus &e) {
      _exit(e.status);
    } catch (...) {
      _exit(1);  // never back into the parent's code
    }
  }
  close(fds[1]);
  pipe_ = fds[0];
}

ForkedChild::~ForkedChild() {
  if (pipe_ >= 0)
    close(pipe_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    exit_status(pid_);
  }
}

ForkedChild::Ended ForkedChild::wait(const std::function<void()> &between) {
  Ended ended;
  char buffer[65536];
  for (;;) {
    struct pollfd p = {pipe_, POLLIN, 0};
    int ready = poll(&p, 1, 20);
    if (ready < 0 && errno != EINTR) {
      kill(pid_, SIGKILL);  // it may be blocked writing to the pipe
      break;
    }
    if (ready <= 0) {
      between();  // a stop signal wakes the poll (EINTR)
      continue;
    }
    ssize_t n = read(pipe_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      kill(pid_, SIGKILL);
    if (n <= 0)
      break;
    ended.output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_);
  pipe_ = -1;
  ended.status = exit_status(pid_);
  pid_ = -1;
  return ended;
}

std::string read_to_end(int fd) {
  std::string out;
  char buffer[65536];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    out.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

int exit_status(pid_t pid) {
  int status = 0;
  pid_t got;
  while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (got != pid)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace mt
