// Bytes as lowercase hex digits, two a byte: digests, build ids, raw values.
#pragma once
#include <cstddef>
#include <string>

namespace mt {

std::string hex_digits(const void *bytes, size_t size);

}  // namespace mt
