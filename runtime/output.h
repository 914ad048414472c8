// Where a script's output goes: stdout or the -o file, buffered, flushed
// on every stop path.
#pragma once
#include <cstdio>
#include <string>

namespace mt {

class Output {
 public:
  Output() : file_(stdout) {}
  ~Output();
  Output(const Output &) = delete;
  Output &operator=(const Output &) = delete;

  // Opens (creates or truncates) `path`; throws mt::Error if it cannot,
  // which the CLI does before anything is attached.
  void open(const std::string &path);
  void write(const std::string &text) { std::fwrite(text.data(), 1, text.size(), file_); }
  // -f json: every output is one JSON object on its own line.
  void set_json(bool json) { json_ = json; }
  bool json() const { return json_; }
  // What a script prints: as is, or as {"type":"printf","data":TEXT}.
  void printed(const std::string &text);
  void flush() { std::fflush(file_); }
  std::FILE *file() { return file_; }

 private:
  std::FILE *file_;
  bool owned_ = false;
  bool json_ = false;
};

}  // namespace mt
