// Loops write() until every byte is out or an error stops it.
#include "common/write_all.h"

#include <unistd.h>

#include <cerrno>

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

}  // namespace mt
