// Where a script's output goes: stdout or the -o file, buffered, flushed
// on every stop path. Write errors are kept, not lost: the first one stops
// further writes, and failure() says how many records reached the file.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output/output_file.h"

namespace mt {

// A -f json message: {"type":TYPE,"data":DATA}, DATA being JSON already.
std::string json_message(std::string_view type, std::string_view data);

class Output {
 public:
  Output();
  ~Output();  // flushes; a failure then goes unreported: close() first to hear of it
  Output(const Output &) = delete;
  Output &operator=(const Output &) = delete;

  // Writes to `file` (see output_file.h) instead of stdout; commit() puts
  // it in place once tracing has begun.
  void open(OutputFile file);
  // The same for a path given on the command line, in place at once.
  void open(const std::string &path);
  void commit();

  // One record: an event, a line a script printed, a report.
  void write(const std::string &text);
  // -f json: every output is one JSON object on its own line.
  void set_json(bool json) { json_ = json; }
  bool json() const { return json_; }
  // -f folded: aggregations as folded stacks; everything else as text.
  void set_folded(bool folded) { folded_ = folded; }
  bool folded() const { return folded_; }
  // What a script prints: as is, or as {"type":"printf","data":TEXT}.
  void printed(const std::string &text);
  // Writes what is buffered; false once any write has failed.
  bool flush();
  // Flushes and closes the -o file (stdout stays open); false once any
  // write has failed. Nothing is written after.
  bool close();
  bool failed() const { return error_ != 0; }
  // "cannot write PATH: REASON (N of M records reached it)".
  std::string failure() const;

 private:
  int fd_;
  std::optional<OutputFile> file_;
  std::string name_ = "standard output";
  bool interactive_;  // a terminal: written at once, as the user waits
  std::string buffer_;
  std::vector<size_t> ends_;  // where each buffered record ends
  uint64_t records_ = 0, reached_ = 0;
  int error_ = 0;
  bool json_ = false;
  bool folded_ = false;
};

}  // namespace mt
