// Names aggregation kinds and turns time units into divisors and column labels.
#include "common/declaration.h"

namespace mt {

const char *agg_kind_name(AggKind kind) {
  switch (kind) {
    case AggKind::Count: return "count";
    case AggKind::Sum: return "sum";
    case AggKind::Min: return "min";
    case AggKind::Max: return "max";
    case AggKind::Avg: return "avg";
    case AggKind::Stats: return "stats";
    case AggKind::Log2Hist: return "hist";
    case AggKind::LinearHist: return "lhist";
  }
  return "?";
}

uint64_t unit_divisor(const std::string &unit) {
  if (unit == "us")
    return 1000;
  if (unit == "ms")
    return 1000000;
  if (unit == "s")
    return 1000000000;
  return 1;
}

std::string unit_label(const std::string &unit) {
  if (unit == "ns" || unit == "us" || unit == "ms")
    return unit.substr(0, 1) + "secs";
  if (unit == "s")
    return "secs";
  return unit.empty() ? "value" : unit;
}

}  // namespace mt
