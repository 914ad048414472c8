// Builds record layouts from BTF and decodes record bytes into values, text and JSON.
#include "run/record_decoder.h"

#include <bpf/btf.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <sstream>

#include "bpf_headers/mt_abi.h"
#include "common/hex_digits.h"
#include "common/json_writer.h"
#include "run/cgroup_paths.h"

namespace mt {

namespace {

StackText &stack_text() {
  static StackText text;
  return text;
}

// The engine's own typedef a type is, through others ("mt_stack_k127_t",
// "mt_cgroup_path_t"), or "".
std::string engine_typedef(const struct btf *btf, int id) {
  for (const struct btf_type *t = btf__type_by_id(btf, id);
       t && (btf_is_mod(t) || btf_is_typedef(t) || btf_is_type_tag(t));
       t = btf__type_by_id(btf, id)) {
    std::string name = btf_is_typedef(t) ? btf__name_by_offset(btf, t->name_off) : "";
    if (name.rfind("mt_", 0) == 0 && name.ends_with("_t"))
      return name;
    id = t->type;
  }
  return "";
}

int skip_modifiers(const struct btf *btf, int id) {
  for (const struct btf_type *t = btf__type_by_id(btf, id);
       t && (btf_is_mod(t) || btf_is_typedef(t) || btf_is_type_tag(t));
       t = btf__type_by_id(btf, id))
    id = t->type;
  return id;
}

RecordField describe(const struct btf *btf, const std::string &name, uint32_t offset, int type_id) {
  RecordField f{name, offset, 0, FieldKind::Bytes};
  int id = skip_modifiers(btf, type_id);
  const struct btf_type *t = btf__type_by_id(btf, id);
  long size = btf__resolve_size(btf, id);
  f.size = size > 0 ? static_cast<uint32_t>(size) : 0;
  if (!t)
    return f;
  std::string engine_type = engine_typedef(btf, type_id);
  if (engine_type.starts_with(MT_STACK_MAP_PREFIX) && f.size == 8) {
    f.kind = FieldKind::Stack;
    f.stack_map = engine_type.substr(0, engine_type.size() - 2);
  } else if (engine_type == MT_NAME(MT_CGROUP_PATH_TYPE) && f.size == 8) {
    f.kind = FieldKind::Unsigned;
    f.cgroup_path = true;
  } else if (btf_is_int(t)) {
    uint8_t enc = btf_int_encoding(t);
    f.kind = enc & BTF_INT_BOOL     ? FieldKind::Bool
             : enc & BTF_INT_SIGNED ? FieldKind::Signed
                                    : FieldKind::Unsigned;
    if (f.size > 8)
      f.kind = FieldKind::Bytes;
  } else if (btf_is_any_enum(t)) {
    f.kind = FieldKind::Signed;
  } else if (btf_is_ptr(t)) {
    f.kind = FieldKind::Pointer;
  } else if (btf_is_float(t)) {
    // Decoded as float or double; other widths (_Float16, long double)
    // stay bytes rather than be read past their end.
    if (f.size == 4 || f.size == 8)
      f.kind = FieldKind::Float;
  } else if (btf_is_array(t)) {
    const struct btf_type *elem = btf__type_by_id(btf, skip_modifiers(btf, btf_array(t)->type));
    if (elem && btf_is_int(elem) && elem->size == 1)
      f.kind = FieldKind::String;
  }
  return f;
}

uint64_t load_unsigned(const unsigned char *p, uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size < 8 ? size : 8);  // little-endian
  return v;
}

int64_t load_signed(const unsigned char *p, uint32_t size) {
  uint64_t v = load_unsigned(p, size);
  if (size < 8 && (v >> (size * 8 - 1)) & 1)
    v |= ~0ull << (size * 8);
  return static_cast<int64_t>(v);
}

std::string load_string(const unsigned char *p, uint32_t size) {
  return std::string(reinterpret_cast<const char *>(p),
                     strnlen(reinterpret_cast<const char *>(p), size));
}

double load_float(const unsigned char *p, uint32_t size) {
  if (size == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

}  // namespace

void set_stack_text(StackText text) {
  stack_text() = std::move(text);
}

std::string show_stack(const std::string &map, uint64_t value) {
  return stack_text() ? stack_text()(map, value)
                      : "\n        [stack " + std::to_string(value) + "]\n";
}

std::string cgroup_path_of(uint64_t id) {
  static CgroupPaths paths;
  return paths.path(id);
}

std::vector<std::string> stack_frames(const std::string &text) {
  std::vector<std::string> frames;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (size_t first = line.find_first_not_of(' '); first != std::string::npos)
      frames.push_back(line.substr(first));
  return frames;
}

std::optional<RecordLayout> layout_from_btf(const struct btf *btf, const std::string &struct_name) {
  int id = btf__find_by_name_kind(btf, struct_name.c_str(), BTF_KIND_STRUCT);
  if (id < 0)
    return std::nullopt;
  return layout_of_type(btf, id);
}

RecordLayout layout_of_type(const struct btf *btf, int type_id) {
  RecordLayout layout;
  int id = skip_modifiers(btf, type_id);
  const struct btf_type *t = btf__type_by_id(btf, id);
  if (!t || !btf_is_struct(t)) {
    RecordField f = describe(btf, "", 0, type_id);
    layout.size = f.size;
    layout.fields.push_back(f);
    return layout;
  }
  layout.size = t->size;
  const struct btf_member *m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); i++) {
    std::string name = btf__name_by_offset(btf, m[i].name_off);
    RecordField f = describe(btf, name, btf_member_bit_offset(t, i) / 8, m[i].type);
    (name.rfind("__", 0) == 0 ? layout.hidden : layout.fields).push_back(f);
  }
  return layout;
}

std::vector<FieldValue> decode_fields(const RecordLayout &layout, const void *data, size_t size) {
  auto *bytes = static_cast<const unsigned char *>(data);
  std::vector<FieldValue> values;
  for (const auto &f : layout.fields) {
    FieldValue v;
    v.kind = f.kind;
    if (field_fits(f, size)) {
      const unsigned char *p = bytes + f.offset;
      switch (f.kind) {
        case FieldKind::Signed: v.i = load_signed(p, f.size); break;
        case FieldKind::Unsigned:
        case FieldKind::Pointer:
        case FieldKind::Bool: v.u = load_unsigned(p, f.size); break;
        case FieldKind::Float: v.f = load_float(p, f.size); break;
        case FieldKind::String: v.s = load_string(p, f.size); break;
        case FieldKind::Bytes: v.s.assign(reinterpret_cast<const char *>(p), f.size); break;
        case FieldKind::Stack:
          v.u = load_unsigned(p, f.size);
          v.s = show_stack(f.stack_map, v.u);
          break;
      }
      if (f.cgroup_path) {
        v.kind = FieldKind::String;
        v.s = cgroup_path_of(v.u);
      }
    }
    values.push_back(std::move(v));
  }
  return values;
}

void encode_field(const RecordField &field, const FieldValue &value, void *data) {
  auto *p = static_cast<unsigned char *>(data) + field.offset;
  switch (field.kind) {
    case FieldKind::Signed:
    case FieldKind::Unsigned:
    case FieldKind::Pointer:
    case FieldKind::Stack:
    case FieldKind::Bool: {
      uint64_t v = value.kind == FieldKind::Signed ? static_cast<uint64_t>(value.i) : value.u;
      std::memcpy(p, &v, field.size < 8 ? field.size : 8);
      break;
    }
    case FieldKind::Float: {
      if (field.size == 4) {
        float f = static_cast<float>(value.f);
        std::memcpy(p, &f, 4);
      } else {
        std::memcpy(p, &value.f, 8);
      }
      break;
    }
    case FieldKind::String:
    case FieldKind::Bytes:
      // A field of 0 bytes may sit in a buffer of none (no memcpy from or
      // to a null pointer, even for nothing).
      if (size_t n = std::min<size_t>(value.s.size(), field.size))
        std::memcpy(p, value.s.data(), n);
      break;
  }
}

std::string field_text(const FieldValue &v) {
  char buf[64];
  switch (v.kind) {
    case FieldKind::Signed: std::snprintf(buf, sizeof(buf), "%" PRId64, v.i); break;
    case FieldKind::Unsigned: std::snprintf(buf, sizeof(buf), "%" PRIu64, v.u); break;
    case FieldKind::Pointer: std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v.u); break;
    case FieldKind::Bool: return v.u ? "true" : "false";
    case FieldKind::Float: std::snprintf(buf, sizeof(buf), "%g", v.f); break;
    case FieldKind::String:
    case FieldKind::Stack: return v.s;
    case FieldKind::Bytes: return hex_digits(v.s.data(), v.s.size());
  }
  return buf;
}

std::string field_json(const FieldValue &v) {
  switch (v.kind) {
    case FieldKind::String:
    case FieldKind::Stack:
    case FieldKind::Bytes:
    case FieldKind::Pointer: return json_string(field_text(v));
    case FieldKind::Float: return std::isfinite(v.f) ? field_text(v) : "null";
    default: return field_text(v);
  }
}

std::string format_record(const RecordLayout &layout, const void *data, size_t size) {
  std::vector<FieldValue> values = decode_fields(layout, data, size);
  std::string out;
  for (size_t i = 0; i < values.size(); i++)
    if (field_fits(layout.fields[i], size))
      out += (out.empty() ? "" : " ") + layout.fields[i].name + "=" + field_text(values[i]);
  return out;
}

std::string record_json(const RecordLayout &layout, const void *data, size_t size) {
  std::vector<FieldValue> values = decode_fields(layout, data, size);
  JsonWriter json;
  json.object();
  for (size_t i = 0; i < values.size(); i++)
    if (field_fits(layout.fields[i], size))
      json.key(layout.fields[i].name).raw(field_json(values[i]));
  return json.end().text();
}

}  // namespace mt
