// Reads a binary's SystemTap SDT notes with libelf.
#include "kernel/usdt_notes.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/error.h"
#include "common/unique_fd.h"

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
    int size = std::atoi(arg.c_str());
    bool is_signed = size < 0;
    size = is_signed ? -size : size;
    if (size != 1 && size != 2 && size != 4 && size != 8)
      size = 8;  // no size given: a long
    types.push_back((is_signed ? "__s" : "__u") + std::to_string(size * 8));
  }
  return types;
}

std::vector<UsdtNote> usdt_notes(const std::string &path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0)
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error(path + " is not a regular file, so it has no USDT probes");
  elf_version(EV_CURRENT);
  Elf *elf = elf_begin(fd.get(), ELF_C_READ, nullptr);
  if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
    if (elf)
      elf_end(elf);
    throw Error(path + " is not a 64-bit ELF file, so it has no USDT probes");
  }
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
      if (take_string(desc, note.n_descsz, text, n.provider) &&
          take_string(desc, note.n_descsz, text, n.name) &&
          take_string(desc, note.n_descsz, text, n.arguments))
        notes.push_back(std::move(n));
    }
  }
  elf_end(elf);
  return notes;
}

}  // namespace mt
