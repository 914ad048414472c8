// Source lines of a BPF object's instructions, from the line info Clang
// writes into .BTF.ext. Generated C carries #line directives back to the
// script, so an instruction made from a script's expression maps to
// `script.lua:LINE`.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mt {

class ElfObject;

struct SourceLine {
  std::string file;  // as Clang recorded it: the #line name, maybe made absolute
  int line = 0, column = 0;
};

class BtfLineInfo {
 public:
  // Empty when the object has no line info; throws mt::Error when it is
  // malformed.
  explicit BtfLineInfo(const ElfObject &object);

  // The line of the instruction at byte `offset` of section `section`: the
  // last record at or before it.
  std::optional<SourceLine> find(std::string_view section, uint32_t offset) const;

 private:
  struct Record {
    uint32_t offset;
    SourceLine line;
  };
  struct Section {
    std::string name;
    std::vector<Record> records;  // by offset
  };
  std::vector<Section> sections_;
};

}  // namespace mt
