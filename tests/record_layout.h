// A record layout as BTF would give it, built by hand for tests and
// benchmarks of the stages after the kernel: the generated header
// (__probe, __ts, __task), then fields and hidden members, each 8-byte
// aligned.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "run/record_decoder.h"

namespace mt::testing {

class Layout {
 public:
  Layout() {
    hidden("__probe", 4);
    hidden("__ts");
    hidden("__task");
  }
  Layout &field(const std::string &name, uint32_t size, FieldKind kind) {
    return add(layout_.fields, name, size, kind);
  }
  Layout &hidden(const std::string &name, uint32_t size = 8, FieldKind kind = FieldKind::Unsigned) {
    return add(layout_.hidden, name, size, kind);
  }
  const RecordLayout &get() const { return layout_; }

 private:
  Layout &add(std::vector<RecordField> &to, const std::string &name, uint32_t size,
              FieldKind kind) {
    to.push_back({name, layout_.size, size, kind});
    layout_.size += (size + 7) / 8 * 8;
    return *this;
  }
  RecordLayout layout_;
};

// The field or hidden member `name` of a layout, or null.
inline const RecordField *field_named(const RecordLayout &layout, const std::string &name) {
  for (const auto *list : {&layout.fields, &layout.hidden})
    for (const auto &f : *list)
      if (f.name == name)
        return &f;
  return nullptr;
}

}  // namespace mt::testing
