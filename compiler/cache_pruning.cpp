// Removes the least recently used cache entries once the directory outgrows its budget.
#include "compiler/cache_pruning.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <vector>

namespace mt {
namespace {

constexpr time_t kLeftoverSeconds = 3600;

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

enum class Kind { Other, Entry, Temporary };

// KEY.o, KEY.front, KEY.tmp.PID (ObjectCache::store's names).
Kind kind_of(std::string_view name) {
  size_t dot = name.find('.');
  if (dot == std::string_view::npos || !is_hex(name.substr(0, dot)))
    return Kind::Other;
  std::string_view rest = name.substr(dot);
  if (rest == ".o" || rest == ".front")
    return Kind::Entry;
  if (rest.starts_with(".tmp.") && rest.size() > 5 &&
      std::all_of(rest.begin() + 5, rest.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Kind::Temporary;
  return Kind::Other;
}

struct Entry {
  std::string name;
  struct timespec used;
  uint64_t bytes;
};

}  // namespace

void prune_cache(int dir_fd, uint64_t budget, const std::string &keep) {
  int listed = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // DIR_FD may be O_PATH
  DIR *dir = listed >= 0 ? fdopendir(listed) : nullptr;
  if (!dir) {
    if (listed >= 0)
      close(listed);
    return;
  }
  std::vector<Entry> entries;
  uint64_t total = 0;
  time_t now = time(nullptr);
  while (struct dirent *d = readdir(dir)) {
    std::string name = d->d_name;
    Kind kind = kind_of(name);
    struct stat st;
    if (kind == Kind::Other || fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode) || st.st_uid != geteuid())
      continue;
    if (kind == Kind::Temporary) {
      if (now - st.st_mtim.tv_sec > kLeftoverSeconds)
        unlinkat(dir_fd, name.c_str(), 0);
      continue;
    }
    total += st.st_size;
    if (name != keep)
      entries.push_back({name, st.st_mtim, uint64_t(st.st_size)});
  }
  closedir(dir);
  if (total <= budget)
    return;
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec
                                          : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Entry &e : entries) {
    if (total <= budget / 4 * 3)
      break;
    // Gone already: another run pruning at the same time took it.
    if (unlinkat(dir_fd, e.name.c_str(), 0) == 0 || errno == ENOENT)
      total -= std::min(total, e.bytes);
  }
}

void mark_cache_entry_used(int fd) {
  futimens(fd, nullptr);
}

}  // namespace mt
