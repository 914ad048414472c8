// Opens regular files only, checking what the path names before opening it.
#include "common/regular_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <cerrno>

namespace mt {

namespace {

// Filesystems whose "regular files" are the kernel's own (/proc/kcore, a
// sysfs attribute) or a user's process's (FUSE, which can block a read).
bool kernel_or_user_served(int fd) {
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0)
    return true;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case BPF_FS_MAGIC:
    case 0x65735546:  // FUSE_SUPER_MAGIC
      return true;
    default: return false;
  }
}

}  // namespace

UniqueFd open_regular_file(const std::string &path, struct stat *st) {
  UniqueFd where(open(path.c_str(), O_PATH | O_CLOEXEC));
  struct stat own {};
  struct stat &s = st ? *st : own;
  if (!where || fstat(where.get(), &s) != 0)
    return {};
  if (!S_ISREG(s.st_mode) || kernel_or_user_served(where.get())) {
    errno = EINVAL;
    return {};
  }
  std::string by_fd = "/proc/self/fd/" + std::to_string(where.get());
  return UniqueFd(open(by_fd.c_str(), O_RDONLY | O_CLOEXEC));
}

}  // namespace mt
