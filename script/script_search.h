// Where scripts are found by name: the directories of MOONTRACE_PATH, the
// invoking user's scripts directory, the system's, then the shipped ones.
#pragma once
#include <string>
#include <vector>

namespace mt {

// The directories of MOONTRACE_PATH (':'-separated), in order.
std::vector<std::string> moontrace_path();

// The directories searched, in order: each of MOONTRACE_PATH, then
// ~/.config/moontrace/scripts of the invoking user (the sudo user under
// sudo), then /etc/moontrace/scripts.
std::vector<std::string> script_dirs();

// A script found by name: a file in one of script_dirs(), or shipped.
struct FoundScript {
  std::string name;  // "uring"
  std::string path;  // the file, or "scripts/uring.lua" for a shipped one
  bool shipped = false;
  std::string version;      // from its script{}, read without running it; "" if none
  std::string description;  // from its script{}, else its first comment line
};

// Every script called NAME, in search order: the first one runs.
std::vector<FoundScript> find_scripts(const std::string &name);
// Every script there is by name, in search order within each name, names sorted.
std::vector<FoundScript> all_scripts();

}  // namespace mt
