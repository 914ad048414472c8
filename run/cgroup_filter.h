// --cgroup PATH: the cgroup v2 directory whose subtree alone is traced, as
// the kernel names it to programs: its id (the directory's inode) and its
// level below the hierarchy's root, for bpf_get_current_ancestor_cgroup_id.
#pragma once
#include <cstdint>
#include <string>

namespace mt {

struct CgroupFilter {
  uint64_t id = 0;  // 0: no filter
  uint32_t level = 0;
};

// Throws mt::Error (one line) when PATH is not a cgroup v2 directory.
CgroupFilter cgroup_filter(const std::string &path);

}  // namespace mt
