// Hashes bytes with Nettle's SHA-256.
#include "common/sha256.h"

#include <nettle/sha2.h>

#include "common/hex_digits.h"

namespace mt {

std::string sha256_hex(std::string_view bytes) {
  struct sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), reinterpret_cast<const uint8_t *>(bytes.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof digest, digest);
  return hex_digits(digest, sizeof digest);
}

}  // namespace mt
