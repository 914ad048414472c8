// Holds the standard descriptors moontrace was started without.
#include "app/standard_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace mt {

void hold_closed_standard_fds() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
      continue;
    // The lowest free number: this one, as the ones below it are open.
    // Opened the other way, so that it still refuses: /dev/full write-only
    // for stdin (reads fail), /dev/null read-only for the others (writes
    // fail), as glibc does for set-user-ID programs.
    int held = fd == STDIN_FILENO ? open("/dev/full", O_WRONLY) : open("/dev/null", O_RDONLY);
    if (held >= 0 && held != fd)
      close(held);  // cannot happen; never leave a stray descriptor
  }
}

}  // namespace mt
