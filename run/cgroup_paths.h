// A cgroup v2 id (what bpf_get_current_cgroup_id() gives, the directory's
// inode) as its path below the hierarchy's root ("/system.slice/x.service"),
// for cgroup_path values.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace mt {

class CgroupPaths {
 public:
  // "/..." , or "cgroup ID" when no directory of the hierarchy has that id
  // (removed since, or no cgroup v2 hierarchy is mounted).
  std::string path(uint64_t id);

 private:
  void scan();  // the whole hierarchy, at most once a second

  std::map<uint64_t, std::string> paths_;
  std::chrono::steady_clock::time_point last_scan_{};
};

}  // namespace mt
