// A stable 128-bit content hash (two FNV-1a lanes) for cache keys.
#pragma once
#include <string>
#include <string_view>

namespace mt {

class ContentHash {
 public:
  ContentHash &add(std::string_view data);
  std::string hex() const;

 private:
  unsigned long long a_ = 0xcbf29ce484222325ull;
  unsigned long long b_ = 0x84222325cbf29ce4ull;
};

}  // namespace mt
