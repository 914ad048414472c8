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
  void flush() { std::fflush(file_); }
  std::FILE *file() { return file_; }

 private:
  std::FILE *file_;
  bool owned_ = false;
};

}  // namespace mt
