// The process tree as /proc shows it.
#include "run/process_tree.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace mt {

namespace {

// The parent in /proc/PID/stat: the second field after the name, which
// ends at the line's last ')' (a name may hold ')' and spaces).
int parent_of(const std::string &stat) {
  size_t end = stat.rfind(')');
  if (end == std::string::npos)
    return -1;
  std::istringstream rest(stat.substr(end + 1));
  char state;
  int parent = -1;
  rest >> state >> parent;
  return rest ? parent : -1;
}

std::string read_all(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool all_digits(const char *name) {
  for (const char *c = name; *c; c++)
    if (*c < '0' || *c > '9')
      return false;
  return *name;
}

}  // namespace

int thread_group_of(int pid, const std::string &proc) {
  std::istringstream status(read_all(proc + "/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("Tgid:"))
      return std::atoi(line.c_str() + 5);
  return -1;
}

std::vector<int> process_subtree(int pid, const std::string &proc) {
  std::multimap<int, int> children;
  if (DIR *dir = opendir(proc.c_str())) {
    while (struct dirent *e = readdir(dir))
      if (all_digits(e->d_name))
        children.emplace(parent_of(read_all(proc + "/" + e->d_name + "/stat")),
                         std::atoi(e->d_name));
    closedir(dir);
  }
  std::vector<int> found = {pid};
  std::set<int> seen = {pid};  // pids reused while the tree is read may loop
  for (size_t next = 0; next < found.size(); next++) {
    auto [first, last] = children.equal_range(found[next]);
    for (auto it = first; it != last; ++it)
      if (seen.insert(it->second).second)
        found.push_back(it->second);
  }
  return found;
}

}  // namespace mt
