// Record bytes from the kernel -> values. Layouts come from the compiled
// object's BTF, so the decoder always matches what Clang laid out.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

struct btf;

namespace mt {

// Stack: a kstack or ustack, shown as its frames (see set_stack_text).
enum class FieldKind { Signed, Unsigned, Bool, String, Pointer, Float, Bytes, Stack };

struct RecordField {
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  FieldKind kind = FieldKind::Bytes;
  std::string stack_map;     // Stack: the map holding its frames ("mt_stack_k127")
  bool cgroup_path = false;  // a cgroup id, decoded as its path (a String)
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
  std::string s;   // String, Bytes; Stack: its frames as text (u holds its value)
};

// A stack's frames, one per line, as bpftrace prints them: each line
// indented and ended, after a first empty one. Installed by the run
// (run/stack_resolver.h); without one, a stack is shown by its value.
using StackText = std::function<std::string(const std::string &map, uint64_t value)>;
void set_stack_text(StackText text);
std::string show_stack(const std::string &map, uint64_t value);
// A cgroup id's path below the hierarchy's root (run/cgroup_paths.h).
std::string cgroup_path_of(uint64_t id);
// A stack's text split into its frames (root last, as captured).
std::vector<std::string> stack_frames(const std::string &text);

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
