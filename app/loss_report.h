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
  // Per probe: runs the kernel skipped because a BPF program was already
  // running on that CPU (its recursion check): events never seen.
  std::vector<uint64_t> skipped = {};
};

// "moontrace: N events, M lost[, K not processed ...][, S runs skipped
// ...]\n" and one line per slot that lost records or probe skipped.
std::string loss_text(const LossCounts &counts);
// {"type":"lost_events","data":{"events":N,"lost":M[,"unprocessed":K],"probes":{...}
//  [,"skipped":S,"skipped_probes":{...}]}}
std::string loss_json(const LossCounts &counts);

}  // namespace mt
