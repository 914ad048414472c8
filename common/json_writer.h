// Compact JSON text, built in order: the writer places the commas, colons
// and quotes, so no stage spells JSON by hand.
#pragma once
#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace mt {

// `text` as a JSON string literal; bytes that are not UTF-8 (kernel
// strings are bytes) and control characters as \u00XX.
std::string json_string(std::string_view text);

class JsonWriter {
 public:
  JsonWriter &object() { return open('{', '}'); }
  JsonWriter &array() { return open('[', ']'); }
  JsonWriter &end();  // closes the innermost object or array
  // The name of the next value, in an object.
  JsonWriter &key(std::string_view name);

  JsonWriter &str(std::string_view text);
  template <std::integral T>
  JsonWriter &num(T v) {
    return raw(std::to_string(v));
  }
  JsonWriter &boolean(bool v) { return raw(v ? "true" : "false"); }
  JsonWriter &null() { return raw("null"); }
  // A value that is JSON already.
  JsonWriter &raw(std::string_view json);

  // The text so far; whole once every object and array is closed.
  const std::string &text() const { return out_; }

 private:
  JsonWriter &open(char opener, char closer);
  void before_value();

  std::string out_;
  std::vector<char> closers_;  // '}' or ']', innermost last
  bool first_ = true;          // the next value is the first of its container
  bool after_key_ = false;
};

}  // namespace mt
