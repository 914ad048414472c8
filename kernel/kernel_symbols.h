// The kernel's function symbols (/proc/kallsyms), to name the frames of a
// kernel stack.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mt {

class KernelSymbols {
 public:
  // From kallsyms' text ("ADDRESS TYPE NAME [MODULE]" lines).
  static KernelSymbols parse(std::string_view kallsyms);
  // This kernel's; none when it cannot be read or hides addresses.
  static KernelSymbols load();

  // "name+offset" of the function holding `address`, or its hex.
  std::string frame(uint64_t address) const;
  size_t size() const { return symbols_.size(); }

 private:
  std::vector<std::pair<uint64_t, std::string>> symbols_;  // by address
};

}  // namespace mt
