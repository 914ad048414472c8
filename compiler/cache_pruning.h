// Keeps the cache directory within a size: what was used least recently
// goes first.
//
// Every distinct script, parameter set, engine build and kernel adds an
// object (uring's: 200-400 KB, and its generated C as much again), and
// nothing else ever removes one. A load touches its file's modification
// time, so that time says when the entry was last used; a store then
// removes the oldest entries while the directory holds more than the
// budget, and temporary files a killed run left behind.
#pragma once
#include <cstdint>
#include <ctime>
#include <string>

namespace mt {

inline constexpr uint64_t kCacheBudgetBytes = uint64_t(256) << 20;

// In the cache directory DIR_FD: removes cache entries (KEY.o, KEY.front:
// KEY in hex) from the least recently used until they take at most 3/4
// of BUDGET, if they take more than BUDGET; never KEEP (a file name), and
// nothing that is not a regular file of the effective user's. Removes
// temporary files (KEY.tmp.PID) older than an hour. Best effort.
void prune_cache(int dir_fd, uint64_t budget, const std::string &keep);

// Marks the entry open at FD as used now.
void mark_cache_entry_used(int fd);

}  // namespace mt
