// Read-only view of a BPF ELF object (64-bit, little-endian, as Clang's
// BPF backend writes it): its sections, symbols and relocations, checked
// against the object's bounds so that a damaged object is an error, never
// a crash.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mt {

struct ElfSection {
  size_t index = 0;
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint32_t link = 0, info = 0;
  std::string_view data;  // empty for SHT_NOBITS
  bool executable() const;
};

struct ElfSymbol {
  std::string name;
  size_t section = 0;  // 0: undefined (an extern)
  uint64_t value = 0, size = 0;
  unsigned char type = 0, binding = 0;  // STT_*, STB_*
};

// A relocation of the section it applies to: at byte `offset`, `symbol`.
struct ElfRelocation {
  uint64_t offset = 0;
  size_t symbol = 0;  // index into ElfObject::symbols()
};

class ElfObject {
 public:
  // Throws mt::Error when `bytes` is not a well-formed BPF object.
  explicit ElfObject(std::string_view bytes);

  const std::vector<ElfSection> &sections() const { return sections_; }
  const ElfSection *section(std::string_view name) const;
  const std::vector<ElfSymbol> &symbols() const { return symbols_; }
  // The relocations that apply to section `index`.
  std::vector<ElfRelocation> relocations_of(size_t index) const;

 private:
  std::string_view bytes_;
  std::vector<ElfSection> sections_;
  std::vector<ElfSymbol> symbols_;
};

}  // namespace mt
