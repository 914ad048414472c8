// What a trace names a process or thread by: its comm from /proc, and the
// cgroup v2 directory it runs in.
#pragma once
#include <cstdint>
#include <string>

namespace mt {

// The first line of /proc/.../comm at `path`, or `fallback`.
std::string proc_comm(const std::string &path, const std::string &fallback);
// " [/system.slice/x.service]": PID's cgroup v2 directory, from
// /proc/PID/cgroup, to follow its name; "" in the root or when it is gone.
std::string cgroup_suffix(uint64_t pid);

}  // namespace mt
