// Record bytes from the kernel -> values. Layouts come from the compiled
// object's BTF, so the decoder always matches what Clang laid out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct btf;
struct lua_State;

namespace mt {

enum class FieldKind { Signed, Unsigned, Bool, String, Pointer, Float, Bytes };

struct RecordField {
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  FieldKind kind = FieldKind::Bytes;
};

struct RecordLayout {
  uint32_t size = 0;
  std::vector<RecordField> fields;  // the __probe header excluded
};

// The layout of `struct NAME` in `btf`; nullopt if absent.
std::optional<RecordLayout> layout_from_btf(const struct btf *btf, const std::string &struct_name);

// Sets one table field per record field on the table at the top of L.
void push_record_fields(lua_State *L, const RecordLayout &layout, const void *data, size_t size);

// "name=value name=value", for scripts that capture without a handler.
std::string format_record(const RecordLayout &layout, const void *data, size_t size);

}  // namespace mt
