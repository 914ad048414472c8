// Aggregations and script maps as text, in the shapes of the bcc tools
// (log2 histograms with star bars, keyed sections, counts sorted by
// value), and as one-line JSON objects for -f json.
#pragma once
#include <string>

#include "run/kernel_maps.h"

namespace mt {

std::string aggregation_text(const AggregationSnapshot &snap);
std::string aggregation_json(const AggregationSnapshot &snap);
// -f folded: a line per row, "KEY;ROOT_FRAME;...;LEAF_FRAME VALUE" (keys
// that are not stacks first, each stack root first, frames without their
// offsets), what flame graph tools read (a histogram's value: its count).
std::string aggregation_folded(const AggregationSnapshot &snap);
std::string map_text(const MapSnapshot &snap);
std::string map_json(const MapSnapshot &snap);

// A histogram's rows from slot 0 (or its first used slot) to its last
// used one: what both the text and the JSON show.
struct HistogramBucket {
  std::string label;  // "0 -> 1", "< 0", ">= 100"
  bool has_low = true, has_high = true;
  int64_t low = 0, high = 0;  // inclusive
  uint64_t count = 0;
};
std::vector<HistogramBucket> histogram_buckets(const AggregationDecl &decl,
                                               const AggregationRow &row);

}  // namespace mt
