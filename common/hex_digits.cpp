// Writes bytes as hex digits.
#include "common/hex_digits.h"

namespace mt {

std::string hex_digits(const void *bytes, size_t size) {
  static const char digits[] = "0123456789abcdef";
  auto *b = static_cast<const unsigned char *>(bytes);
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; i++) {
    out += digits[b[i] >> 4];
    out += digits[b[i] & 15];
  }
  return out;
}

}  // namespace mt
