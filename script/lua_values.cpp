// Pushes decoded field values and record fields onto the Lua stack for handlers.
#include "script/lua_values.h"

#include <lua.hpp>

namespace mt {

void push_field_value(lua_State *L, const FieldValue &v) {
  switch (v.kind) {
    case FieldKind::Signed: lua_pushinteger(L, v.i); break;
    case FieldKind::Unsigned:
    case FieldKind::Pointer: lua_pushinteger(L, static_cast<lua_Integer>(v.u)); break;
    case FieldKind::Bool: lua_pushboolean(L, v.u != 0); break;
    case FieldKind::Float: lua_pushnumber(L, v.f); break;
    case FieldKind::String:
    case FieldKind::Stack:
    case FieldKind::Bytes: lua_pushlstring(L, v.s.data(), v.s.size()); break;
  }
}

void push_record_fields(lua_State *L, const RecordLayout &layout, const void *data, size_t size) {
  std::vector<FieldValue> values = decode_fields(layout, data, size);
  for (size_t i = 0; i < values.size(); i++) {
    if (!field_fits(layout.fields[i], size))
      continue;
    push_field_value(L, values[i]);
    lua_setfield(L, -2, layout.fields[i].name.c_str());
  }
}

}  // namespace mt
