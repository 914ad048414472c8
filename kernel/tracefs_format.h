// Reads tracepoint record layouts from tracefs format files.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace mt {

struct TraceField {
  std::string type;  // as declared, e.g. "const char *", "u64", "__data_loc char[]"
  std::string name;
  int offset = 0;
  int size = 0;
  bool is_signed = false;
  int array_len = 0;  // char comm[16] -> 16
  bool data_loc = false;
};

struct TraceFormat {
  std::string category, event;
  std::vector<TraceField> fields;  // common_* fields excluded
  const TraceField *find(const std::string &name) const;
};

// Parses the text of a tracefs `format` file; throws Error on a field it cannot read.
TraceFormat parse_trace_format(const std::string &text);

// The tracefs mount point, mounting it when it is not mounted yet.
// Returns "" when tracefs cannot be found or mounted.
std::string tracefs_root();

// Reads events/CATEGORY/EVENT/format; nullopt if the event does not
// exist. Throws Error when tracefs cannot be reached or the file read.
std::optional<TraceFormat> read_trace_format(const std::string &category, const std::string &event);

// Every "category:event" this kernel has.
std::vector<std::string> list_tracepoints();

}  // namespace mt
