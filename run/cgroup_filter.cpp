// Finds a cgroup v2 directory's id and depth by walking up to its hierarchy's root.
#include "run/cgroup_filter.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/unique_fd.h"

namespace mt {

namespace {

bool is_cgroup2(int fd) {
  struct statfs fs {};
  return fstatfs(fd, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

}  // namespace

CgroupFilter cgroup_filter(const std::string &path) {
  UniqueFd dir(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir)
    throw Error("--cgroup " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (!is_cgroup2(dir.get()) || fstat(dir.get(), &st) != 0)
    throw Error("--cgroup " + path +
                ": not a cgroup v2 directory (look for one where cgroup2 is mounted: "
                "mount -t cgroup2)");
  CgroupFilter filter{static_cast<uint64_t>(st.st_ino), 0};
  // Up to the root: the last directory whose parent is no longer the
  // same cgroup2 file system.
  UniqueFd at = std::move(dir);
  for (;;) {
    UniqueFd parent(openat(at.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    struct stat up {
    }, here{};
    if (!parent || !is_cgroup2(parent.get()) || fstat(parent.get(), &up) != 0 ||
        fstat(at.get(), &here) != 0 || up.st_dev != here.st_dev || up.st_ino == here.st_ino)
      break;
    filter.level++;
    at = std::move(parent);
  }
  // The hierarchy's root is cgroup 1: another top is a cgroup namespace's
  // root or a bind mount, below which levels are not the kernel's.
  if (struct stat top{}; fstat(at.get(), &top) != 0 || top.st_ino != 1)
    throw Error("--cgroup " + path +
                ": the cgroup hierarchy is seen from inside a cgroup namespace or through a "
                "bind mount here; run moontrace where the whole hierarchy is mounted");
  return filter;
}

}  // namespace mt
