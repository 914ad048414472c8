// The report of events taken and lost that ends every run: lines for
// stderr and, with -f json, a lost_events message. Pure, so it is tested
// without tracing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mt {

struct LossCounts {
  uint64_t events = 0;                   // records taken from the buffers
  uint64_t unprocessed = 0;              // taken after the stop's time ran out
  std::vector<uint64_t> lost;            // per record slot (probe, then thread names)
  std::vector<std::string> probe_names;  // per probe; slots past them are thread names
};

// "moontrace: N events, M lost[, K not processed ...]\n" and one line per
// slot that lost records.
std::string loss_text(const LossCounts &counts);
// {"type":"lost_events","data":{"events":N,"lost":M[,"unprocessed":K],"probes":{...}}}
std::string loss_json(const LossCounts &counts);

}  // namespace mt
