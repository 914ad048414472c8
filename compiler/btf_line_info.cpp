// Parses .BTF.ext line info to map a BPF instruction offset to its source file and line.
#include "compiler/btf_line_info.h"

#include <linux/btf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/error.h"
#include "compiler/bpf_elf.h"

namespace mt {

namespace {

// The header of .BTF.ext, as the kernel's libbpf defines it (not in uapi).
struct BtfExtHeader {
  uint16_t magic;
  uint8_t version;
  uint8_t flags;
  uint32_t hdr_len;
  uint32_t func_info_off, func_info_len;
  uint32_t line_info_off, line_info_len;
};

struct LineRecord {
  uint32_t insn_off;  // bytes from the start of the section
  uint32_t file_name_off, line_off;
  uint32_t line_col;  // line << 10 | column
};

[[noreturn]] void malformed(const char *why) {
  throw Error(std::string("the compiled BPF object has malformed line info (") + why + ")");
}

template <typename T>
T read_at(std::string_view bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    malformed("out of bounds");
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string string_at(std::string_view strings, uint32_t offset) {
  if (offset >= strings.size())
    malformed("string out of bounds");
  std::string_view rest = strings.substr(offset);
  return std::string(rest.substr(0, rest.find('\0')));
}

}  // namespace

BtfLineInfo::BtfLineInfo(const ElfObject &object) {
  const ElfSection *btf = object.section(".BTF");
  const ElfSection *ext = object.section(".BTF.ext");
  if (!btf || !ext)
    return;
  auto header = read_at<btf_header>(btf->data, 0);
  if (header.magic != BTF_MAGIC)
    malformed("bad .BTF magic");
  uint64_t strings_at = uint64_t(header.hdr_len) + header.str_off;
  if (strings_at > btf->data.size() || btf->data.size() - strings_at < header.str_len)
    malformed(".BTF strings out of bounds");
  std::string_view strings = btf->data.substr(strings_at, header.str_len);

  auto ext_header = read_at<BtfExtHeader>(ext->data, 0);
  if (ext_header.magic != BTF_MAGIC)
    malformed("bad .BTF.ext magic");
  uint64_t at = uint64_t(ext_header.hdr_len) + ext_header.line_info_off;
  uint64_t end = at + ext_header.line_info_len;
  if (end > ext->data.size())
    malformed("line info out of bounds");
  if (ext_header.line_info_len == 0)
    return;
  uint32_t record_size = read_at<uint32_t>(ext->data, at);
  if (record_size < sizeof(LineRecord))
    malformed("line records too small");
  at += 4;
  while (at < end) {
    uint32_t name = read_at<uint32_t>(ext->data, at);
    uint32_t count = read_at<uint32_t>(ext->data, at + 4);
    at += 8;
    if (count > (end - at) / record_size)
      malformed("too many line records");
    Section section{string_at(strings, name), {}};
    for (uint32_t i = 0; i < count; i++, at += record_size) {
      auto r = read_at<LineRecord>(ext->data, at);
      section.records.push_back(
          {r.insn_off,
           {string_at(strings, r.file_name_off), int(r.line_col >> 10), int(r.line_col & 0x3ff)}});
    }
    std::stable_sort(section.records.begin(), section.records.end(),
                     [](const Record &a, const Record &b) { return a.offset < b.offset; });
    sections_.push_back(std::move(section));
  }
}

std::optional<SourceLine> BtfLineInfo::find(std::string_view section, uint32_t offset) const {
  for (const Section &s : sections_) {
    if (s.name != section)
      continue;
    auto after = std::upper_bound(s.records.begin(), s.records.end(), offset,
                                  [](uint32_t off, const Record &r) { return off < r.offset; });
    if (after == s.records.begin())
      return std::nullopt;
    return std::prev(after)->line;
  }
  return std::nullopt;
}

}  // namespace mt
