// Decides whether a slice nests on its thread track, and picks async lanes.
#include "trace/slice_nesting.h"

#include <algorithm>

namespace mt {

ThreadNesting::Thread &ThreadNesting::thread_of(uint64_t key) {
  for (const Recent &r : recent_)
    if (r.key == key)
      return *r.thread;
  if (threads_.size() >= kMaxThreads && !threads_.count(key)) {
    threads_.clear();
    for (Recent &r : recent_)
      r = {};
  }
  Recent &r = recent_[next_recent_++ % 4];
  r = {key, &threads_[key]};
  return *r.thread;
}

bool ThreadNesting::fits(uint64_t thread, uint64_t start, uint64_t end) {
  Thread &t = thread_of(thread);
  auto &roots = t.roots;
  if (roots.empty() || roots.back().end <= start) {
    // After everything drawn: the common case (hops, syscalls).
    if (start < t.horizon)
      return false;
    roots.push_back({start, end});
  } else if (!nest(t, start, end)) {
    return false;
  }
  if (roots.size() > kMaxRoots) {
    size_t forget = roots.size() / 2;
    t.horizon = roots[forget - 1].end;
    roots.erase(roots.begin(), roots.begin() + forget);
  }
  return true;
}

bool ThreadNesting::nest(Thread &t, uint64_t start, uint64_t end) {
  if (start < t.horizon)
    return false;  // it may overlap a forgotten root: not known to fit
  auto &roots = t.roots;
  // Roots that end after `start`: the last ones, as roots are disjoint.
  size_t first = roots.size();
  while (first > 0 && roots[first - 1].end > start)
    first--;
  size_t after = first;  // roots from here start at or after `end`
  bool holds = false;
  for (size_t i = first; i < roots.size(); i++) {
    const Root &r = roots[i];
    if (r.start >= end)
      break;  // it comes after: Perfetto pops the new slice when it starts
    if (r.start > start && r.end <= end) {
      holds = true;  // the new slice holds it
      after = i + 1;
      continue;
    }
    if (r.start == start && r.end == end && !r.holds && i + 1 == roots.size()) {
      roots[i].holds = true;  // the same span, drawn again: it nests inside
      return true;
    }
    // It starts inside r (or with it, longer) and ends elsewhere: dropped.
    return false;
  }
  Root added{start, end, holds};
  roots.erase(roots.begin() + first, roots.begin() + after);
  roots.insert(roots.begin() + first, added);
  return true;
}

uint64_t AsyncLanes::lane(uint64_t pid, uint32_t name, uint64_t start, uint64_t end) {
  if (ends_.size() >= kMaxSets && !ends_.count(pid << 32 ^ name))
    ends_.clear();
  std::vector<uint64_t> &lanes = ends_[pid << 32 ^ name];
  auto free = std::find_if(lanes.begin(), lanes.end(), [&](uint64_t e) { return e <= start; });
  if (free == lanes.end())
    free = lanes.insert(lanes.end(), 0);
  *free = std::max(*free, end);
  return static_cast<uint64_t>(free - lanes.begin());
}

}  // namespace mt
