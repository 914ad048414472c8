// Hashes bytes with Nettle's SHA-256.
#include "common/sha256.h"

#include "common/hex_digits.h"

namespace mt {

std::string sha256_hex(std::string_view bytes) {
  struct sha256_ctx ctx;
  sha256_init(&ctx);
  if (!bytes.empty())  // data() may be null
    sha256_update(&ctx, bytes.size(), reinterpret_cast<const uint8_t *>(bytes.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  return hex_digits(digest, sizeof digest);
}

Sha256Parts::Sha256Parts() {
  sha256_init(&ctx_);
}

Sha256Parts &Sha256Parts::add(std::string_view part) {
  if (!part.empty())
    sha256_update(&ctx_, part.size(), reinterpret_cast<const uint8_t *>(part.data()));
  uint64_t size = part.size();
  sha256_update(&ctx_, sizeof size, reinterpret_cast<const uint8_t *>(&size));
  return *this;
}

std::string Sha256Parts::hex() {
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx_, sizeof digest, digest);
  return hex_digits(digest, sizeof digest);
}

}  // namespace mt
