// Reads a binary's SystemTap SDT notes with libelf.
#include "kernel/usdt_notes.h"

#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <sstream>

#include "common/c_tokens.h"
#include "common/error.h"
#include "kernel/elf_file.h"

namespace mt {

namespace {

constexpr uint32_t kStapsdtNoteType = 3;

// A NUL-ended string at `at` in `bytes`, moving `at` past it; false past the end.
bool take_string(const char *bytes, size_t size, size_t &at, std::string &out) {
  const void *end = at < size ? std::memchr(bytes + at, '\0', size - at) : nullptr;
  if (!end)
    return false;
  out.assign(bytes + at, static_cast<const char *>(end));
  at = static_cast<size_t>(static_cast<const char *>(end) - bytes) + 1;
  return true;
}

}  // namespace

std::vector<std::string> UsdtNote::argument_types() const {
  std::vector<std::string> types;
  std::istringstream in(arguments);
  for (std::string arg; in >> arg;) {
    // "[-]SIZE@location", or a location alone: a long.
    bool is_signed = arg[0] == '-';
    int size = arg.size() > 2 && arg[is_signed + 1] == '@' ? arg[is_signed] - '0' : 8;
    if (size != 1 && size != 2 && size != 4 && size != 8)
      size = 8;
    types.push_back((is_signed ? "__s" : "__u") + std::to_string(size * 8));
  }
  return types;
}

std::vector<UsdtNote> usdt_notes(const std::string &path) {
  ElfFile file(path, "USDT probes");
  Elf *elf = file.elf();
  if (gelf_getclass(elf) != ELFCLASS64)
    throw Error(path + " is not a 64-bit ELF file, so it has no USDT probes");
  std::vector<UsdtNote> notes;
  size_t strings = 0;
  elf_getshdrstrndx(elf, &strings);
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
      continue;
    const char *section = elf_strptr(elf, strings, shdr.sh_name);
    if (!section || std::strcmp(section, ".note.stapsdt") != 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    GElf_Nhdr note;
    size_t name_at, desc_at;
    for (size_t at = 0; data && (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;) {
      const char *bytes = static_cast<const char *>(data->d_buf);
      if (note.n_type != kStapsdtNoteType || note.n_namesz != 8 ||
          std::memcmp(bytes + name_at, "stapsdt", 8) != 0 || note.n_descsz < 24)
        continue;
      const char *desc = bytes + desc_at;
      UsdtNote n;
      std::memcpy(&n.address, desc, 8);
      std::memcpy(&n.semaphore, desc + 16, 8);
      size_t text = 24;
      // sys/sdt.h writes C identifiers: anything else is not a probe
      // (the names reach generated C and the output).
      if (take_string(desc, note.n_descsz, text, n.provider) &&
          take_string(desc, note.n_descsz, text, n.name) &&
          take_string(desc, note.n_descsz, text, n.arguments) && is_c_identifier(n.provider) &&
          is_c_identifier(n.name) && n.argument_types().size() <= kMaxUsdtArguments)
        notes.push_back(std::move(n));
    }
  }
  return notes;
}

}  // namespace mt
