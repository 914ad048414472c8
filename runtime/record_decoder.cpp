#include "runtime/record_decoder.h"

#include <bpf/btf.h>

#include <cinttypes>
#include <cstring>
#include <lua.hpp>

namespace mt {

namespace {

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
  if (btf_is_int(t)) {
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

std::string hex_bytes(const unsigned char *p, uint32_t size) {
  std::string out;
  char buf[3];
  for (uint32_t i = 0; i < size; i++) {
    std::snprintf(buf, sizeof(buf), "%02x", p[i]);
    out += buf;
  }
  return out;
}

}  // namespace

std::optional<RecordLayout> layout_from_btf(const struct btf *btf, const std::string &struct_name) {
  int id = btf__find_by_name_kind(btf, struct_name.c_str(), BTF_KIND_STRUCT);
  if (id < 0)
    return std::nullopt;
  const struct btf_type *t = btf__type_by_id(btf, id);
  RecordLayout layout;
  layout.size = t->size;
  const struct btf_member *m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); i++) {
    std::string name = btf__name_by_offset(btf, m[i].name_off);
    if (name == "__probe")
      continue;
    layout.fields.push_back(describe(btf, name, btf_member_bit_offset(t, i) / 8, m[i].type));
  }
  return layout;
}

void push_record_fields(lua_State *L, const RecordLayout &layout, const void *data, size_t size) {
  auto *bytes = static_cast<const unsigned char *>(data);
  for (const auto &f : layout.fields) {
    if (f.offset + f.size > size)
      continue;
    const unsigned char *p = bytes + f.offset;
    switch (f.kind) {
      case FieldKind::Signed: lua_pushinteger(L, load_signed(p, f.size)); break;
      case FieldKind::Unsigned:
      case FieldKind::Pointer:
        lua_pushinteger(L, static_cast<lua_Integer>(load_unsigned(p, f.size)));
        break;
      case FieldKind::Bool: lua_pushboolean(L, load_unsigned(p, f.size) != 0); break;
      case FieldKind::Float: lua_pushnumber(L, load_float(p, f.size)); break;
      case FieldKind::String: {
        std::string s = load_string(p, f.size);
        lua_pushlstring(L, s.data(), s.size());
        break;
      }
      case FieldKind::Bytes: lua_pushlstring(L, reinterpret_cast<const char *>(p), f.size); break;
    }
    lua_setfield(L, -2, f.name.c_str());
  }
}

std::string format_record(const RecordLayout &layout, const void *data, size_t size) {
  auto *bytes = static_cast<const unsigned char *>(data);
  std::string out;
  char buf[64];
  for (const auto &f : layout.fields) {
    if (f.offset + f.size > size)
      continue;
    const unsigned char *p = bytes + f.offset;
    if (!out.empty())
      out += ' ';
    out += f.name + "=";
    switch (f.kind) {
      case FieldKind::Signed:
        std::snprintf(buf, sizeof(buf), "%" PRId64, load_signed(p, f.size));
        break;
      case FieldKind::Unsigned:
        std::snprintf(buf, sizeof(buf), "%" PRIu64, load_unsigned(p, f.size));
        break;
      case FieldKind::Pointer:
        std::snprintf(buf, sizeof(buf), "0x%" PRIx64, load_unsigned(p, f.size));
        break;
      case FieldKind::Bool:
        std::snprintf(buf, sizeof(buf), "%s", load_unsigned(p, f.size) ? "true" : "false");
        break;
      case FieldKind::Float: std::snprintf(buf, sizeof(buf), "%g", load_float(p, f.size)); break;
      case FieldKind::String: out += load_string(p, f.size); continue;
      case FieldKind::Bytes: out += hex_bytes(p, f.size); continue;
    }
    out += buf;
  }
  return out;
}

}  // namespace mt
