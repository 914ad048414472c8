// Reads a process's comm and cgroup from /proc for the trace's names.
#include "trace/process_names.h"

#include <fstream>

#include "common/printable.h"

namespace mt {

std::string proc_comm(const std::string &path, const std::string &fallback) {
  std::ifstream in(path);
  std::string name;
  if (!std::getline(in, name) || name.empty())
    return fallback;
  return name;
}

std::string cgroup_suffix(uint64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("0::/") && line.size() > 4)
      return " [" + printable(line.substr(3)) + "]";  // a delegated subtree's names are its user's
  return "";
}

}  // namespace mt
