// Writes the end-of-run loss report as text and as a JSON message.
#include "app/loss_report.h"

#include "common/json_writer.h"
#include "output/output.h"

namespace mt {
namespace {

uint64_t total_lost(const LossCounts &counts) {
  uint64_t total = 0;
  for (uint64_t n : counts.lost)
    total += n;
  return total;
}

std::string slot_name(const LossCounts &counts, size_t slot) {
  return slot < counts.probe_names.size() ? counts.probe_names[slot] : "thread names";
}

}  // namespace

std::string loss_text(const LossCounts &counts) {
  std::string out = "moontrace: " + std::to_string(counts.events) + " events, " +
                    std::to_string(total_lost(counts)) + " lost";
  if (counts.unprocessed)
    out += ", " + std::to_string(counts.unprocessed) +
           " not processed (the stop gives buffered events 0.5 s)";
  out += "\n";
  for (size_t i = 0; i < counts.lost.size(); i++)
    if (counts.lost[i])
      out += "moontrace:   lost " + std::to_string(counts.lost[i]) + " from " +
             slot_name(counts, i) + "\n";
  return out;
}

std::string loss_json(const LossCounts &counts) {
  JsonWriter data;
  data.object().key("events").num(counts.events).key("lost").num(total_lost(counts));
  if (counts.unprocessed)
    data.key("unprocessed").num(counts.unprocessed);
  data.key("probes").object();
  for (size_t i = 0; i < counts.lost.size(); i++)
    if (counts.lost[i])
      data.key(slot_name(counts, i)).num(counts.lost[i]);
  return json_message("lost_events", data.end().end().text());
}

}  // namespace mt
