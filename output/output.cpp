// Buffers script output for stdout or an output file and keeps the first write error.
#include "output/output.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/write_all.h"

namespace mt {

namespace {
constexpr size_t kBufferBytes = 8192;
}

Output::Output() : fd_(STDOUT_FILENO), interactive_(isatty(STDOUT_FILENO)) {}

Output::~Output() {
  flush();
}

void Output::open(OutputFile file) {
  flush();
  fd_ = file.fd();
  name_ = file.path();
  interactive_ = isatty(fd_);
  file_.emplace(std::move(file));
}

void Output::open(const std::string &path) {
  open(OutputFile::open(path));
  commit();
}

void Output::commit() {
  if (file_)
    file_->commit();
}

void Output::write(const std::string &text) {
  records_++;
  if (error_)
    return;
  buffer_ += text;
  ends_.push_back(buffer_.size());
  if (buffer_.size() >= kBufferBytes || interactive_)
    flush();
}

std::string json_message(std::string_view type, std::string_view data) {
  return JsonWriter().object().key("type").str(type).key("data").raw(data).end().text();
}

void Output::printed(const std::string &text) {
  if (json_)
    write(json_message("printf", json_string(text)) + "\n");
  else
    write(text);
}

bool Output::flush() {
  size_t done = error_ ? 0 : write_output(fd_, buffer_.data(), buffer_.size());
  if (done < buffer_.size() && !error_)
    error_ = errno;
  // Records wholly written reached the file; the rest never will.
  reached_ +=
      static_cast<uint64_t>(std::upper_bound(ends_.begin(), ends_.end(), done) - ends_.begin());
  buffer_.clear();
  ends_.clear();
  return !error_;
}

bool Output::close() {
  flush();
  if (file_) {
    int error = file_->close();
    if (!error_)
      error_ = error;
    file_->settle(!error_);
    fd_ = -1;  // its number may be reused
  }
  return !error_;
}

std::string Output::failure() const {
  return "cannot write " + name_ + ": " + std::string(output_error_text(error_)) + " (" +
         std::to_string(reached_) + " of " + std::to_string(records_) + " records reached it)";
}

}  // namespace mt
