// Reads a script file after checking it is a regular file no larger than the limit.
#include "script/script_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/trusted_path.h"

namespace mt {
namespace {

const char *file_kind(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    default: return "not a regular file";
  }
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      close(fd);
  }
};

}  // namespace

std::optional<std::string> read_script_file(const std::string &path, size_t max_bytes) {
  // O_PATH: nothing is opened for reading before the checks (opening a
  // device can act, as a watchdog's does; a FIFO would wait for a writer).
  Fd file{open(path.c_str(), O_PATH | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return std::nullopt;
    throw Error("cannot read script '" + path + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (fstat(file.fd, &st) != 0)
    throw Error("cannot read script '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error("'" + path + "' is " + file_kind(st.st_mode) + ", not a script file");
  std::string too_big = "script '" + path + "' is larger than " + std::to_string(max_bytes >> 20) +
                        " MiB; a script is Lua source";
  if (static_cast<size_t>(st.st_size) > max_bytes)
    throw Error(too_big);
  // Read only once the file and the directories above it are trusted:
  // moontrace may be root and the script someone else's to change.
  UniqueFd trusted = open_trusted_file(path, script_owners());
  // Read to the end even so: files in /proc and /sys say they are empty.
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(trusted.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw Error("cannot read script '" + path + "': " + std::strerror(errno));
    if (n == 0)
      return text;
    if (text.size() + n > max_bytes)
      throw Error(too_big);
    text.append(buf, n);
  }
}

}  // namespace mt
