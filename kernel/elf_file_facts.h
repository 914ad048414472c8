// What names a user stack's frames in a binary: its GNU build id, and its
// loaded segments, which turn a file offset into the binary's own address.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mt {

struct ElfFileFacts {
  std::string build_id;  // hex; "" when it has none
  struct Segment {
    uint64_t offset = 0, address = 0, size = 0;  // file offset, its address, bytes in the file
  };
  std::vector<Segment> loads;

  // The address of a file offset, as the binary's symbols and DWARF name
  // it; nullopt when no loaded segment holds it.
  std::optional<uint64_t> address_of(uint64_t file_offset) const;
};

// Of the ELF file open at `fd`; nullopt when it is not one.
std::optional<ElfFileFacts> read_elf_file_facts(int fd);

}  // namespace mt
