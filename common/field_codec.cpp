// Writes and reads length-prefixed fields.
#include "common/field_codec.h"

#include <charconv>

#include "common/error.h"

namespace mt {

FieldWriter &FieldWriter::str(std::string_view text) {
  out_ += std::to_string(text.size());
  out_ += ':';
  out_ += text;
  return *this;
}

FieldWriter &FieldWriter::strs(const std::vector<std::string> &texts) {
  num(static_cast<int64_t>(texts.size()));
  for (const auto &t : texts)
    str(t);
  return *this;
}

std::string FieldReader::str() {
  size_t colon = in_.find(':', at_);
  size_t size = 0;
  if (colon == std::string_view::npos || colon == at_ || colon - at_ > 12)
    throw Error("damaged cache entry (no field length)");
  auto [end, error] = std::from_chars(in_.data() + at_, in_.data() + colon, size);
  if (error != std::errc() || end != in_.data() + colon || size > in_.size() - colon - 1)
    throw Error("damaged cache entry (bad field length)");
  std::string text(in_.substr(colon + 1, size));
  at_ = colon + 1 + size;
  return text;
}

int64_t FieldReader::num() {
  std::string text = str();
  int64_t n = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size())
    throw Error("damaged cache entry (bad number)");
  return n;
}

std::vector<std::string> FieldReader::strs() {
  int64_t count = num();
  if (count < 0 || static_cast<uint64_t>(count) > in_.size() - at_)
    throw Error("damaged cache entry (bad count)");
  std::vector<std::string> texts;
  for (int64_t i = 0; i < count; i++)
    texts.push_back(str());
  return texts;
}

}  // namespace mt
