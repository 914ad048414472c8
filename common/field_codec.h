// Plain values written one after another into bytes and read back in the
// same order: each string as its length, a colon and its bytes, each
// number as a string. For cache entries and fingerprints, where a value
// must never run into the next one.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mt {

class FieldWriter {
 public:
  FieldWriter &str(std::string_view text);
  FieldWriter &num(int64_t n) { return str(std::to_string(n)); }
  FieldWriter &strs(const std::vector<std::string> &texts);
  const std::string &bytes() const { return out_; }

 private:
  std::string out_;
};

// Reads what a FieldWriter wrote; throws mt::Error on anything else.
class FieldReader {
 public:
  explicit FieldReader(std::string_view bytes) : in_(bytes) {}
  std::string str();
  int64_t num();
  std::vector<std::string> strs();
  bool done() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace mt
