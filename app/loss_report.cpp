// Writes the end-of-run loss report as text and as a JSON message.
#include "app/loss_report.h"

#include "common/json_writer.h"
#include "output/output.h"

namespace mt {
namespace {

uint64_t total(const std::vector<uint64_t> &counts) {
  uint64_t sum = 0;
  for (uint64_t n : counts)
    sum += n;
  return sum;
}

std::string slot_name(const LossCounts &counts, size_t slot) {
  return slot < counts.probe_names.size() ? counts.probe_names[slot] : "thread names";
}

}  // namespace

std::string loss_text(const LossCounts &counts) {
  std::string out = "moontrace: " + std::to_string(counts.events) + " events, " +
                    std::to_string(total(counts.lost)) + " lost";
  if (counts.unprocessed)
    out += ", " + std::to_string(counts.unprocessed) +
           " not processed (the stop gives buffered events 0.5 s)";
  if (uint64_t skipped = total(counts.skipped))
    out += ", " + std::to_string(skipped) +
           " probe runs skipped by the kernel (a BPF program was already running on the CPU)";
  out += "\n";
  for (size_t i = 0; i < counts.lost.size(); i++)
    if (counts.lost[i])
      out += "moontrace:   lost " + std::to_string(counts.lost[i]) + " from " +
             slot_name(counts, i) + "\n";
  for (size_t i = 0; i < counts.skipped.size(); i++)
    if (counts.skipped[i])
      out += "moontrace:   skipped " + std::to_string(counts.skipped[i]) + " runs of " +
             slot_name(counts, i) + "\n";
  return out;
}

std::string loss_json(const LossCounts &counts) {
  JsonWriter data;
  data.object().key("events").num(counts.events).key("lost").num(total(counts.lost));
  if (counts.unprocessed)
    data.key("unprocessed").num(counts.unprocessed);
  data.key("probes").object();
  for (size_t i = 0; i < counts.lost.size(); i++)
    if (counts.lost[i])
      data.key(slot_name(counts, i)).num(counts.lost[i]);
  data.end();
  if (uint64_t skipped = total(counts.skipped)) {
    data.key("skipped").num(skipped).key("skipped_probes").object();
    for (size_t i = 0; i < counts.skipped.size(); i++)
      if (counts.skipped[i])
        data.key(slot_name(counts, i)).num(counts.skipped[i]);
    data.end();
  }
  return json_message("lost_events", data.end().text());
}

}  // namespace mt
