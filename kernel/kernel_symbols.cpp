// Reads /proc/kallsyms' function symbols and finds the one holding an address.
#include "kernel/kernel_symbols.h"

#include <algorithm>
#include <cinttypes>
#include <fstream>
#include <sstream>

namespace mt {

KernelSymbols KernelSymbols::parse(std::string_view kallsyms) {
  KernelSymbols symbols;
  size_t at = 0;
  while (at < kallsyms.size()) {
    size_t end = kallsyms.find('\n', at);
    if (end == std::string_view::npos)
      end = kallsyms.size();
    std::string_view line = kallsyms.substr(at, end - at);
    at = end + 1;
    size_t type_at = line.find(' ');
    if (type_at == std::string_view::npos || type_at + 3 > line.size() || line[type_at + 2] != ' ')
      continue;
    char type = line[type_at + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W')
      continue;  // functions only
    uint64_t address = 0;
    std::string hex(line.substr(0, type_at));
    if (std::sscanf(hex.c_str(), "%" SCNx64, &address) != 1 || address == 0)
      continue;  // 0: addresses hidden (kptr_restrict)
    std::string_view name = line.substr(type_at + 3);
    name = name.substr(0, name.find_first_of(" \t"));
    symbols.symbols_.emplace_back(address, std::string(name));
  }
  std::stable_sort(symbols.symbols_.begin(), symbols.symbols_.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  return symbols;
}

KernelSymbols KernelSymbols::load() {
  std::ifstream in("/proc/kallsyms");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str());
}

std::string KernelSymbols::frame(uint64_t address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](uint64_t a, const auto &s) { return a < s.first; });
  if (after == symbols_.begin()) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%" PRIx64, address);
    return hex;
  }
  const auto &[start, name] = *std::prev(after);
  return name + "+" + std::to_string(address - start);
}

}  // namespace mt
