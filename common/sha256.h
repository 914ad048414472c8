// SHA-256 of bytes (Nettle's), as 64 hex digits: what sha256sum prints, so
// a user can pin a package by the digest they computed themselves.
#pragma once
#include <string>
#include <string_view>

namespace mt {

std::string sha256_hex(std::string_view bytes);

}  // namespace mt
