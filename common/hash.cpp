// Computes the two-lane FNV-1a content hash and prints it as 32 hex digits.
#include "common/hash.h"

#include <cstdio>

namespace mt {

ContentHash &ContentHash::add(std::string_view data) {
  for (unsigned char c : data) {
    a_ = (a_ ^ c) * 0x100000001b3ull;
    b_ = (b_ ^ (c + 0x9e)) * 0x100000001b3ull;
  }
  // Separates consecutive parts: add("ab").add("c") != add("a").add("bc").
  a_ = (a_ ^ data.size()) * 0x100000001b3ull;
  return *this;
}

std::string ContentHash::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", a_, b_);
  return buf;
}

}  // namespace mt
