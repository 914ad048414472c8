// The flows a sink has begun and not yet ended: a script's key -> the
// flow's id in the trace. Keys name flows machine-wide: a flow begun in one
// process may step or end in another, or in an interrupt. One flat open-addressed table (linear
// probing, backward-shift deletion), as a flow begins and ends per request: no node is allocated
// per flow, and a lookup touches one or two cache lines.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mt {

// Spreads keys that differ only in their high or aligned-away low bits
// (kernel addresses).
inline uint64_t flow_key_hash(uint64_t key) {
  uint64_t h = key * 0xff51afd7ed558ccdull;
  return h ^ h >> 32;
}

class OpenFlows {
 public:
  // The id of the open flow `key`, 0 if none.
  uint64_t find(uint64_t key) const {
    if (count_ == 0)
      return 0;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Entry &e = slots_[i];
      if (e.id == 0)
        return 0;
      if (e.key == key)
        return e.id;
    }
  }
  // Opens `key` as flow `id` (not 0), in place of an open one.
  void open(uint64_t key, uint64_t id) {
    if ((count_ + 1) * 2 > slots_.size())
      grow();
    size_t i = home(key);
    for (; slots_[i].id; i = (i + 1) & mask_)
      if (slots_[i].key == key) {
        slots_[i].id = id;
        return;
      }
    slots_[i] = {key, id};
    count_++;
  }
  // Ends `key`: its id, 0 if it was not open.
  uint64_t close(uint64_t key) {
    if (count_ == 0)
      return 0;
    size_t i = home(key);
    for (; slots_[i].id; i = (i + 1) & mask_)
      if (slots_[i].key == key)
        break;
    uint64_t id = slots_[i].id;
    if (!id)
      return 0;
    // Backward shift: move up every later entry of the run whose home is
    // not within (i, j], so that no probe sequence meets a hole.
    for (size_t j = (i + 1) & mask_; slots_[j].id; j = (j + 1) & mask_) {
      size_t h = home(slots_[j].key);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = {};
    count_--;
    return id;
  }
  size_t size() const { return count_; }
  void clear() {
    slots_.assign(kInitialSlots, Entry{});
    mask_ = kInitialSlots - 1;
    count_ = 0;
  }

 private:
  struct Entry {
    uint64_t key = 0, id = 0;  // id 0: a free slot
  };
  static constexpr size_t kInitialSlots = 1024;

  size_t home(uint64_t key) const { return flow_key_hash(key) & mask_; }
  void grow() {
    std::vector<Entry> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    count_ = 0;
    for (const Entry &e : old)
      if (e.id)
        open(e.key, e.id);
  }

  std::vector<Entry> slots_ = std::vector<Entry>(kInitialSlots);
  size_t mask_ = kInitialSlots - 1;
  size_t count_ = 0;
};

// The flows ended last, by key, in a fixed direct-mapped table: a
// slice is drawn when it ends, so a flow point at its start can come after
// its flow's end (a request that completes inside a slice on another
// thread). Such a point belongs to the flow that ended after it.
class EndedFlows {
 public:
  void ended(uint64_t key, uint64_t id, uint64_t ts) { slots_[home(key)] = {key, id, ts}; }
  // The id of flow `key` if it ended at or after `ts`, else 0.
  uint64_t find(uint64_t key, uint64_t ts) const {
    const Entry &e = slots_[home(key)];
    return e.id && e.key == key && ts <= e.end_ts ? e.id : 0;
  }

 private:
  struct Entry {
    uint64_t key = 0, id = 0, end_ts = 0;
  };
  static constexpr size_t kSlots = 4096;
  static size_t home(uint64_t key) { return flow_key_hash(key) & (kSlots - 1); }
  std::vector<Entry> slots_ = std::vector<Entry>(kSlots);
};

}  // namespace mt
