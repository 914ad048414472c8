// Parses a BPF ELF object's sections, symbols and relocations, bounds-checking every read.
#include "compiler/bpf_elf.h"

#include <elf.h>

#include <cstring>

#include "common/error.h"

namespace mt {

namespace {

[[noreturn]] void malformed(const std::string &why) {
  throw Error("the compiled BPF object is malformed (" + why + ")");
}

template <typename T>
T read_at(std::string_view bytes, uint64_t offset, const char *what) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    malformed(std::string(what) + " out of bounds");
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string_view slice(std::string_view bytes, uint64_t offset, uint64_t size, const char *what) {
  if (offset > bytes.size() || bytes.size() - offset < size)
    malformed(std::string(what) + " out of bounds");
  return bytes.substr(offset, size);
}

// A NUL-terminated name at `offset` of a string table.
std::string string_at(std::string_view table, uint64_t offset) {
  if (offset >= table.size())
    return "";
  std::string_view rest = table.substr(offset);
  return std::string(rest.substr(0, rest.find('\0')));
}

}  // namespace

bool ElfSection::executable() const {
  return type == SHT_PROGBITS && (flags & SHF_EXECINSTR);
}

ElfObject::ElfObject(std::string_view bytes) : bytes_(bytes) {
  auto header = read_at<Elf64_Ehdr>(bytes, 0, "ELF header");
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_machine != EM_BPF)
    malformed("not a little-endian 64-bit BPF ELF file");
  if (header.e_shentsize != sizeof(Elf64_Shdr))
    malformed("bad section headers");
  std::vector<Elf64_Shdr> headers;
  for (size_t i = 0; i < header.e_shnum; i++)
    headers.push_back(
        read_at<Elf64_Shdr>(bytes, header.e_shoff + i * sizeof(Elf64_Shdr), "section header"));
  if (header.e_shstrndx >= headers.size())
    malformed("no section name table");
  const Elf64_Shdr &names_header = headers[header.e_shstrndx];
  std::string_view names =
      slice(bytes, names_header.sh_offset, names_header.sh_size, "section names");
  for (size_t i = 0; i < headers.size(); i++) {
    const Elf64_Shdr &h = headers[i];
    ElfSection s;
    s.index = i;
    s.name = string_at(names, h.sh_name);
    s.type = h.sh_type;
    s.flags = h.sh_flags;
    s.link = h.sh_link;
    s.info = h.sh_info;
    if (h.sh_type != SHT_NOBITS && h.sh_type != SHT_NULL)
      s.data = slice(bytes, h.sh_offset, h.sh_size, "section");
    sections_.push_back(std::move(s));
  }
  for (const ElfSection &s : sections_) {
    if (s.type != SHT_SYMTAB)
      continue;
    if (s.link >= sections_.size())
      malformed("symbol table without strings");
    std::string_view strings = sections_[s.link].data;
    for (size_t at = 0; at + sizeof(Elf64_Sym) <= s.data.size(); at += sizeof(Elf64_Sym)) {
      auto raw = read_at<Elf64_Sym>(s.data, at, "symbol");
      ElfSymbol sym;
      sym.name = string_at(strings, raw.st_name);
      sym.section = raw.st_shndx < SHN_LORESERVE ? raw.st_shndx : 0;
      sym.value = raw.st_value;
      sym.size = raw.st_size;
      sym.type = ELF64_ST_TYPE(raw.st_info);
      sym.binding = ELF64_ST_BIND(raw.st_info);
      symbols_.push_back(std::move(sym));
    }
    break;  // an object has one symbol table
  }
}

const ElfSection *ElfObject::section(std::string_view name) const {
  for (const ElfSection &s : sections_)
    if (s.name == name)
      return &s;
  return nullptr;
}

std::vector<ElfRelocation> ElfObject::relocations_of(size_t index) const {
  std::vector<ElfRelocation> out;
  for (const ElfSection &s : sections_) {
    if (s.type != SHT_REL || s.info != index)
      continue;
    for (size_t at = 0; at + sizeof(Elf64_Rel) <= s.data.size(); at += sizeof(Elf64_Rel)) {
      auto raw = read_at<Elf64_Rel>(s.data, at, "relocation");
      size_t symbol = ELF64_R_SYM(raw.r_info);
      if (symbol >= symbols_.size())
        malformed("relocation against a missing symbol");
      out.push_back({raw.r_offset, symbol});
    }
  }
  return out;
}

}  // namespace mt
