// Reads a binary's build id note and PT_LOAD segments with libelf.
#include "kernel/elf_file_facts.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cstring>

#include "common/hex_digits.h"

namespace mt {

namespace {

// The GNU build id note among `bytes` (notes), or "".
std::string build_id_in(Elf_Data *data) {
  GElf_Nhdr note;
  size_t name_at, desc_at;
  for (size_t at = 0; data && (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;)
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
        std::memcmp(static_cast<const char *>(data->d_buf) + name_at, "GNU", 4) == 0)
      return hex_digits(static_cast<const unsigned char *>(data->d_buf) + desc_at, note.n_descsz);
  return "";
}

// As the kernel reads it for a stack: from the notes the file loads
// (PT_NOTE); else from its note sections (a debug file's).
std::string build_id_of(Elf *elf, size_t segments) {
  constexpr size_t kMaxNotes = 64 << 10;  // a build id is in the first few notes
  for (size_t i = 0; i < segments; i++) {
    GElf_Phdr phdr;
    if (!gelf_getphdr(elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_NOTE)
      continue;
    Elf_Data *data = elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset),
                                          std::min<size_t>(phdr.p_filesz, kMaxNotes), ELF_T_NHDR);
    if (std::string id = build_id_in(data); !id.empty())
      return id;
  }
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_NOTE && shdr.sh_size <= kMaxNotes)
      if (std::string id = build_id_in(elf_getdata(scn, nullptr)); !id.empty())
        return id;
  }
  return "";
}

}  // namespace

std::optional<uint64_t> ElfFileFacts::address_of(uint64_t file_offset) const {
  for (const auto &s : loads)
    if (file_offset >= s.offset && file_offset - s.offset < s.size)
      return file_offset - s.offset + s.address;
  return std::nullopt;
}

std::optional<ElfFileFacts> read_elf_file_facts(int fd) {
  elf_version(EV_CURRENT);
  Elf *elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (!elf)
    return std::nullopt;
  std::optional<ElfFileFacts> facts;
  size_t count = 0;
  if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &count) == 0) {
    facts.emplace();
    for (size_t i = 0; i < count; i++) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) && phdr.p_type == PT_LOAD)
        facts->loads.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz});
    }
    facts->build_id = build_id_of(elf, count);
  }
  elf_end(elf);
  return facts;
}

}  // namespace mt
