// Work done by a forked copy of this process, whose bytes come back
// through a pipe: LLVM compiles once per process, so each further compile
// is a child's.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>

namespace mt {

class ForkedChild {
 public:
  // Forks; the child writes what WORK returns and exits 0, or exits with
  // the status WORK gives by throwing ExitStatus. It dies with this
  // process. Throws mt::Error when no child can be made.
  struct ExitStatus {
    int status;
  };
  explicit ForkedChild(const std::function<std::string()> &work);
  // A child not waited for is killed.
  ~ForkedChild();
  ForkedChild(const ForkedChild &) = delete;
  ForkedChild &operator=(const ForkedChild &) = delete;

  // Waits for the child, calling BETWEEN (which may throw: a stop
  // signal's check) every 20 ms; what it wrote, and its exit status (128 +
  // the signal that killed it).
  struct Ended {
    std::string output;
    int status = -1;
  };
  Ended wait(const std::function<void()> &between);

 private:
  pid_t pid_ = -1;
  int pipe_ = -1;
};

// What FD holds until its end (or an error), then closes it.
std::string read_to_end(int fd);

// PID's exit status, once it exits; 128 + the signal that killed it; -1
// when it cannot be had.
int exit_status(pid_t pid);

}  // namespace mt
