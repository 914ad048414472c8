// Run-phase access to a loaded program's state: the script's maps and
// aggregations read into plain values (per-CPU copies merged), cleared,
// and script maps read and written entry by entry.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/declaration.h"
#include "run/record_decoder.h"

namespace mt {

class BpfProgram;

struct AggregationRow {
  std::vector<FieldValue> key;  // one per AggregationDecl::keys
  uint64_t count = 0;           // count: the count; histograms: total
  int64_t sum = 0, min = 0, max = 0;
  std::map<uint32_t, uint64_t> slots;  // histograms: count per slot
};

struct AggregationSnapshot {
  const AggregationDecl *decl = nullptr;
  std::vector<AggregationRow> rows;  // sorted by key
  uint64_t dropped = 0;              // updates that found the map full
};

struct MapEntry {
  std::vector<FieldValue> key, value;
};

struct MapSnapshot {
  const MapDecl *decl = nullptr;
  RecordLayout key, value;
  std::vector<MapEntry> entries;  // in the kernel's iteration order
};

struct LatencyCounts {
  uint64_t starts = 0, restarts = 0, matched = 0, unmatched = 0;
  uint64_t pending = 0;  // starts not stopped (yet): entries still in the map
  uint64_t dropped = 0;  // starts the map refused to keep
  // Starts pushed out of the full map before their stop came.
  uint64_t evicted() const {
    uint64_t gone = matched + pending + dropped;
    return starts > gone ? starts - gone : 0;
  }
};

class KernelMaps {
 public:
  KernelMaps(const BpfProgram &program, const Declaration &decl);

  AggregationSnapshot aggregation(int id) const;
  void clear_aggregation(int id);

  MapSnapshot map(int index) const;
  void clear_map(int index);
  const RecordLayout &key_layout(int index) const { return maps_[index].key; }
  const RecordLayout &value_layout(int index) const { return maps_[index].value; }
  // Values of per-CPU maps are summed field by field.
  bool lookup(int index, const std::vector<char> &key, std::vector<char> &value) const;
  void update(int index, const std::vector<char> &key, const std::vector<char> &value);
  void remove(int index, const std::vector<char> &key);

  LatencyCounts latency(int id) const;
  // -p/-c: flows whose mark another flow took over (mt_flow_marks.h).
  uint64_t flow_marks_taken() const;

 private:
  struct Map {
    int fd = -1;
    RecordLayout key, value;
    bool percpu = false;
    bool task_storage = false;  // keyed by thread, not iterable
  };
  const Declaration &decl_;
  std::vector<Map> maps_;          // script maps, by index
  std::vector<Map> aggregations_;  // by aggregation id; fd -1 if no probe feeds it
  std::vector<Map> latencies_;     // start times of latency pairs
  int agg_full_fd_ = -1, latency_counts_fd_ = -1, flow_marks_taken_fd_ = -1;
  int cpus_;
};

}  // namespace mt
