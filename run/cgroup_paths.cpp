// Finds cgroup directories by inode under the cgroup v2 mount.
#include "run/cgroup_paths.h"

#include <ftw.h>
#include <sys/stat.h>

#include <fstream>

#include "common/printable.h"

namespace mt {

namespace {

std::string cgroup2_mount() {
  std::ifstream mounts("/proc/self/mounts");
  for (std::string device, dir, type, rest; mounts >> device >> dir >> type;) {
    std::getline(mounts, rest);
    if (type == "cgroup2")
      return dir;
  }
  return "";
}

// nftw's callback has no argument of its own.
thread_local std::map<uint64_t, std::string> *scanning = nullptr;
thread_local size_t root_length = 0;

int add_directory(const char *path, const struct stat *st, int type, struct FTW *) {
  if (type == FTW_D) {
    // A delegated subtree's names are its user's.
    std::string relative = printable(std::string(path).substr(root_length));
    (*scanning)[st->st_ino] = relative.empty() ? "/" : relative;
  }
  return 0;
}

}  // namespace

void CgroupPaths::scan() {
  auto now = std::chrono::steady_clock::now();
  if (now - last_scan_ < std::chrono::seconds(1))
    return;
  last_scan_ = now;
  std::string root = cgroup2_mount();
  if (root.empty())
    return;
  scanning = &paths_;
  root_length = root.size();
  // Not following links, not leaving the mount.
  nftw(root.c_str(), add_directory, 16, FTW_PHYS | FTW_MOUNT);
  scanning = nullptr;
}

std::string CgroupPaths::path(uint64_t id) {
  auto it = paths_.find(id);
  // Ids only grow: one below the largest a scan found was removed before it.
  if (it == paths_.end() && (paths_.empty() || id > paths_.rbegin()->first)) {
    scan();
    it = paths_.find(id);
  }
  return it != paths_.end() ? it->second : "cgroup " + std::to_string(id);
}

}  // namespace mt
