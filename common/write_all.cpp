// Loops write() until every byte is out or an error stops it.
#include "common/write_all.h"

#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/stop_request.h"

namespace mt {

bool write_all(int fd, std::string_view bytes) {
  for (size_t at = 0; at < bytes.size();) {
    ssize_t n = write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

size_t write_output(int fd, const char *data, size_t size) {
  using Clock = std::chrono::steady_clock;
  struct stat st;
  bool pipe = fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
  // A pipe with room for a page takes PIPE_BUF bytes without blocking.
  size_t piece = pipe ? PIPE_BUF : size;
  Clock::time_point progress = Clock::now();
  size_t at = 0;
  while (at < size) {
    pollfd p{fd, POLLOUT, 0};
    int ready = pipe ? poll(&p, 1, 100) : 1;
    ssize_t n = ready > 0 ? write(fd, data + at, std::min(piece, size - at)) : -1;
    if (n > 0) {
      at += static_cast<size_t>(n);
      progress = Clock::now();
      continue;
    }
    if (n == 0 || (ready > 0 && errno != EINTR && errno != EAGAIN) ||
        (ready < 0 && errno != EINTR)) {
      errno = n == 0 ? EIO : errno;
      return at;
    }
    if (stop_requested() && Clock::now() - progress >= std::chrono::seconds(1)) {
      errno = ETIMEDOUT;
      return at;
    }
  }
  return at;
}

std::string_view output_error_text(int error) {
  return error == ETIMEDOUT ? "its reader took nothing for a second after the stop"
                            : std::strerror(error);
}

}  // namespace mt
