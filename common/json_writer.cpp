// Writes JSON values and containers, escaping strings that are not UTF-8.
#include "common/json_writer.h"

#include <cstdio>

namespace mt {
namespace {

bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    size_t extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 4;
    if (extra == 4 || i + extra >= text.size())
      return false;
    for (size_t k = 1; k <= extra; k++)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 2)
        return false;
    i += extra + 1;
  }
  return true;
}

}  // namespace

std::string json_string(std::string_view text) {
  bool utf8 = valid_utf8(text);
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f || (c > 0x7f && !utf8)) {
      // Kernel strings are bytes, not always UTF-8: escape them if not.
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void JsonWriter::before_value() {
  if (!after_key_ && !first_)
    out_ += ',';
  first_ = false;
  after_key_ = false;
}

JsonWriter &JsonWriter::open(char opener, char closer) {
  before_value();
  out_ += opener;
  closers_.push_back(closer);
  first_ = true;
  return *this;
}

JsonWriter &JsonWriter::end() {
  if (!closers_.empty()) {
    out_ += closers_.back();
    closers_.pop_back();
  }
  first_ = false;
  after_key_ = false;
  return *this;
}

JsonWriter &JsonWriter::key(std::string_view name) {
  before_value();
  out_ += json_string(name);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter &JsonWriter::str(std::string_view text) {
  return raw(json_string(text));
}

JsonWriter &JsonWriter::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

}  // namespace mt
