// SHA-256 of bytes (Nettle's), as 64 hex digits: what sha256sum prints, so
// a user can pin a package by the digest they computed themselves.
#pragma once
#include <nettle/sha2.h>

#include <string>
#include <string_view>

namespace mt {

std::string sha256_hex(std::string_view bytes);

// SHA-256 of a sequence of parts, each followed by its length, so that
// add("ab").add("c") differs from add("a").add("bc"): for the object
// cache's keys and digests, where a collision would load another script's
// object. (With SHA-NI, a warm start's 600 KB take 0.35 ms, where
// ContentHash, a byte at a time, took 0.7.)
class Sha256Parts {
 public:
  Sha256Parts();
  Sha256Parts &add(std::string_view part);
  std::string hex();

 private:
  struct sha256_ctx ctx_;
};

}  // namespace mt
