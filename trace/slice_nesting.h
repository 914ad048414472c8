// Keeps drawn slices where Perfetto shows them: a complete slice that
// partly overlaps one already on its thread track is dropped by Perfetto's
// importer (slice_drop_overlapping_complete_event), so the sink asks here
// first, and draws such a slice in a lane of an async track instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace mt {

// The slices drawn on each thread track, as the outermost ones (roots)
// with whether they hold others. Records come in time order, so a new
// slice ends after nearly all drawn ones: it either holds a root, comes
// after it, or partly overlaps it.
class ThreadNesting {
 public:
  // Whether [start, end] nests with the slices drawn on `thread` (Perfetto
  // sorts by start, equal starts in file order): if so it is taken as drawn.
  bool fits(uint64_t thread, uint64_t start, uint64_t end);
  // Roots kept per thread: beyond, the older half is forgotten, and a slice
  // that starts before what is remembered does not fit.
  static constexpr size_t kMaxRoots = 256;
  // Threads remembered: beyond, all are forgotten at once.
  static constexpr size_t kMaxThreads = 1 << 14;

 private:
  struct Root {
    uint64_t start, end;
    bool holds = false;  // holds other slices
  };
  struct Thread {
    std::vector<Root> roots;  // disjoint, by start
    uint64_t horizon = 0;     // forgotten roots ended by then
  };
  Thread &thread_of(uint64_t key);
  // fits() where the slice does not simply come after every root.
  static bool nest(Thread &t, uint64_t start, uint64_t end);

  std::unordered_map<uint64_t, Thread> threads_;
  // Records come from a few threads at a time: the last ones' entries
  // (nodes of threads_, which stay put until it is cleared).
  struct Recent {
    uint64_t key = ~0ull;
    Thread *thread = nullptr;
  };
  Recent recent_[4];
  size_t next_recent_ = 0;
};

// Lanes of async tracks, per (process, name): a slice goes in the first
// lane free at its start. In Perfetto each lane is a track of its own
// (name, process, correlation id), so overlapping slices are all shown.
class AsyncLanes {
 public:
  uint64_t lane(uint64_t pid, uint32_t name, uint64_t start, uint64_t end);
  // Lane sets remembered: beyond, all are forgotten at once (a forgotten
  // lane may be reused while a slice in it is still open, which Perfetto
  // nests, not drops).
  static constexpr size_t kMaxSets = 1 << 14;

 private:
  std::unordered_map<uint64_t, std::vector<uint64_t>> ends_;  // the end of each lane's last slice
};

}  // namespace mt
