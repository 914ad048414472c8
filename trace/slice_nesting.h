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
// after it, nests in it, or partly overlaps it.
class ThreadNesting {
 public:
  // Whether [start, end] nests with the slices drawn on `thread` (Perfetto
  // sorts by start, equal starts in file order): if so it is taken as
  // drawn. A 1-ns slice always nests.
  bool fits(uint64_t thread, uint64_t start, uint64_t end);
  // Roots kept per thread: beyond, the older half is merged into fewer
  // (merge_older_half). 48 KiB a thread at most.
  static constexpr size_t kMaxRoots = 2048;
  // Threads remembered: beyond, all are forgotten at once.
  static constexpr size_t kMaxThreads = 1024;

 private:
  struct Root {
    uint64_t start, end;
    bool holds = false;  // holds other slices
  };
  struct Thread {
    std::vector<Root> roots;  // disjoint, by start
  };
  Thread &thread_of(uint64_t key);
  // fits() where the slice does not simply come after every root.
  static bool nest(std::vector<Root> &roots, uint64_t start, uint64_t end);
  static void merge_older_half(std::vector<Root> &roots);

  std::unordered_map<uint64_t, Thread> threads_;
  // Records come from a few threads at a time: the last ones' entries
  // (nodes of threads_, which stay put until it is cleared).
  struct Recent {
    uint64_t key = ~0ull;
    Thread *thread = nullptr;
  };
  Recent recent_[4];
  size_t next_recent_ = 0;
  // When threads were forgotten, the latest end drawn: no slice that
  // starts before it is known to fit.
  uint64_t horizon_ = 0, latest_end_ = 0;
};

// Lanes of async tracks, per (track, name): a slice goes in the first lane
// free at its start. Each lane has an id of its own in the whole trace:
// Perfetto keys an FXT async track by its correlation id alone, so two
// lanes must never share one.
class AsyncLanes {
 public:
  // The id of the lane of [start, end] among the lanes of `track` and `name`.
  uint64_t lane(uint64_t track, uint32_t name, uint64_t start, uint64_t end);
  // Lane sets remembered: beyond, all are forgotten at once.
  static constexpr size_t kMaxSets = 1 << 14;

 private:
  struct Lane {
    uint64_t end, id;  // the end of its last slice
  };
  std::unordered_map<uint64_t, std::vector<Lane>> sets_;
  uint64_t next_id_ = 1;
};

}  // namespace mt
