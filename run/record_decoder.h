// Record bytes from the kernel -> values. Layouts come from the compiled
// object's BTF, so the decoder always matches what Clang laid out.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct btf;

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
  std::vector<RecordField> fields;  // what scripts see
  std::vector<RecordField> hidden;  // generated members, named __*, e.g. __ts
};

// One decoded value; which member holds it follows `kind`.
struct FieldValue {
  FieldKind kind = FieldKind::Unsigned;
  int64_t i = 0;   // Signed
  uint64_t u = 0;  // Unsigned, Pointer, Bool
  double f = 0;    // Float
  std::string s;   // String, Bytes
};

// The layout of `struct NAME` in `btf`; nullopt if absent.
std::optional<RecordLayout> layout_from_btf(const struct btf *btf, const std::string &struct_name);
// A struct's members (generated ones, named __*, left out), or for any
// other type one field named "".
RecordLayout layout_of_type(const struct btf *btf, int type_id);

// A short record (from an older layout) lacks its last fields.
inline bool field_fits(const RecordField &f, size_t size) {
  return f.offset + f.size <= size;
}
std::vector<FieldValue> decode_fields(const RecordLayout &layout, const void *data, size_t size);
// Writes `value` into a field of a zeroed buffer (the inverse of decoding).
void encode_field(const RecordField &field, const FieldValue &value, void *data);

// As text ("0x..." for pointers) and as JSON.
std::string field_text(const FieldValue &value);
std::string field_json(const FieldValue &value);

// "name=value name=value", for scripts that capture without a handler.
std::string format_record(const RecordLayout &layout, const void *data, size_t size);
// {"name":value,...}, the same for -f json.
std::string record_json(const RecordLayout &layout, const void *data, size_t size);

}  // namespace mt
