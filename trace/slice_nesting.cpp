// Decides whether a slice nests on its thread track, and picks async lanes.
#include "trace/slice_nesting.h"

#include <algorithm>
#include <functional>

namespace mt {

ThreadNesting::Thread &ThreadNesting::thread_of(uint64_t key) {
  for (const Recent &r : recent_)
    if (r.key == key)
      return *r.thread;
  if (threads_.size() >= kMaxThreads && !threads_.count(key)) {
    // Forgotten: a slice that starts before what was drawn so far may
    // overlap one of theirs, and is not known to fit.
    threads_.clear();
    for (Recent &r : recent_)
      r = {};
    horizon_ = latest_end_;
  }
  Recent &r = recent_[next_recent_++ % 4];
  r = {key, &threads_[key]};
  return *r.thread;
}

bool ThreadNesting::fits(uint64_t thread, uint64_t start, uint64_t end) {
  latest_end_ = std::max(latest_end_, end);
  bool one_ns = end - start == 1;
  if (start < horizon_)
    return one_ns;
  Thread &t = thread_of(thread);
  auto &roots = t.roots;
  if (roots.empty() || roots.back().end <= start) {
    roots.push_back({start, end});  // after everything drawn: the common case
  } else if (!nest(roots, start, end)) {
    return false;
  }
  if (roots.size() > kMaxRoots)
    merge_older_half(roots);
  return true;
}

void ThreadNesting::merge_older_half(std::vector<Root> &roots) {
  // Roots of the older half are joined across all but its widest gaps,
  // into roots that hold others: what starts inside one is not known to
  // fit, what holds one does. A slice that holds many drawn before it (an
  // enter that submitted hundreds of requests) starts in such a gap: the
  // time before its first, spent outside it, is wider than those between
  // the hops it holds.
  size_t older = roots.size() / 2, keep = older / 4;
  std::vector<uint64_t> gaps;
  for (size_t i = 0; i + 1 < older; i++)
    gaps.push_back(roots[i + 1].start - roots[i].end);
  std::nth_element(gaps.begin(), gaps.begin() + keep, gaps.end(), std::greater<>());
  uint64_t widest = gaps[keep];  // gaps wider than this one are kept
  size_t to = 0;
  for (size_t i = 1; i < older; i++) {
    if (roots[i].start - roots[to].end > widest) {
      roots[++to] = roots[i];
    } else {
      roots[to].end = roots[i].end;
      roots[to].holds = true;
    }
  }
  roots.erase(roots.begin() + to + 1, roots.begin() + older);
}

bool ThreadNesting::nest(std::vector<Root> &roots, uint64_t start, uint64_t end) {
  // Roots that end after `start`: the last ones, as roots are disjoint.
  size_t first = roots.size();
  while (first > 0 && roots[first - 1].end > start)
    first--;
  size_t after = first;  // the new slice holds the roots before this one
  bool holds = false;
  for (size_t i = first; i < roots.size(); i++) {
    Root &r = roots[i];
    if (r.start >= end)
      break;  // it comes after: Perfetto pops the new slice when it starts
    if (r.start > start && r.end <= end) {
      holds = true;  // the new slice holds it
      after = i + 1;
      continue;
    }
    // Inside r (Perfetto sorts r first, written first when they start
    // together): it nests if r holds nothing that it could cross. A 1-ns
    // slice crosses nothing.
    if (r.start <= start && end <= r.end && (!r.holds || end - start == 1)) {
      r.holds = true;
      return true;
    }
    return false;  // it starts inside r, or with it, and ends after it
  }
  roots.erase(roots.begin() + first, roots.begin() + after);
  roots.insert(roots.begin() + first, Root{start, end, holds});
  return true;
}

uint64_t AsyncLanes::lane(uint64_t track, uint32_t name, uint64_t start, uint64_t end) {
  uint64_t set = track * 0x9e3779b97f4a7c15ull ^ name;
  if (sets_.size() >= kMaxSets && !sets_.count(set))
    sets_.clear();  // their lanes' ids are never given again
  std::vector<Lane> &lanes = sets_[set];
  auto free =
      std::find_if(lanes.begin(), lanes.end(), [&](const Lane &l) { return l.end <= start; });
  if (free == lanes.end())
    free = lanes.insert(lanes.end(), Lane{0, next_id_++});
  free->end = std::max(free->end, end);
  return free->id;
}

}  // namespace mt
