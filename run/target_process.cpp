// Watches the process that -p traces, through a pidfd where the kernel has them.
#include "run/target_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace mt {

TargetProcess::TargetProcess(int pid)
    : pid_(pid), pidfd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))) {}

TargetProcess::~TargetProcess() {
  if (pidfd_ >= 0)
    close(pidfd_);
}

bool TargetProcess::exited() const {
  if (pidfd_ < 0)
    return kill(pid_, 0) != 0 && errno == ESRCH;
  pollfd p{pidfd_, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

}  // namespace mt
