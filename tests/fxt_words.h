// A tiny FXT word builder for tests that write traces by hand, one 64-bit
// word at a time (the reader's unit tests, `moontrace dump`'s e2e tests).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "trace/fxt_format.h"

namespace mt::testing {

using Words = std::vector<uint64_t>;

using fxt::kMagic;

inline Words operator+(Words a, const Words &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A string inline: its bytes, zero-padded to whole words.
inline Words padded(const std::string &s) {
  Words w((s.size() + 7) / 8, 0);
  if (!s.empty())
    std::memcpy(w.data(), s.data(), s.size());
  return w;
}

// The ref of an inline string of `s`.
inline uint64_t inl(const std::string &s) {
  return 0x8000 | s.size();
}

inline uint64_t header(uint64_t type, size_t words, uint64_t rest = 0) {
  return type | static_cast<uint64_t>(words) << 4 | rest;
}

// A record of `type` whose header carries `rest` and whose body is `body`.
inline Words record(uint64_t type, uint64_t rest, const Words &body) {
  return Words{header(type, 1 + body.size(), rest)} + body;
}

// The words as the little-endian bytes of a file.
inline std::string bytes(const Words &w) {
  std::string out(w.size() * 8, '\0');
  for (size_t i = 0; i < w.size(); i++)
    for (int b = 0; b < 8; b++)
      out[i * 8 + b] = static_cast<char>(w[i] >> (8 * b));
  return out;
}

}  // namespace mt::testing
