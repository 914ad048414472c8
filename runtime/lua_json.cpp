#include "runtime/lua_json.h"

#include <cmath>
#include <cstdio>
#include <lua.hpp>
#include <map>

#include "runtime/record_decoder.h"

namespace mt {
namespace {

std::string number(lua_State *L, int index) {
  if (lua_isinteger(L, index))
    return std::to_string(lua_tointeger(L, index));
  double d = lua_tonumber(L, index);
  if (!std::isfinite(d))
    return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", d);
  return text;
}

std::string value(lua_State *L, int index, int depth);

std::string table(lua_State *L, int index, int depth) {
  if (depth > 32)
    luaL_error(L, "a table nested more than 32 deep (a cycle?) cannot be JSON");
  index = lua_absindex(L, index);
  lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, index));
  size_t keys = 0;
  for (lua_pushnil(L); lua_next(L, index); lua_pop(L, 1))
    keys++;
  if (n > 0 && static_cast<size_t>(n) == keys) {
    std::string out = "[";
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, index, i);
      out += (i > 1 ? "," : "") + value(L, -1, depth + 1);
      lua_pop(L, 1);
    }
    return out + "]";
  }
  std::map<std::string, std::string> members;
  for (lua_pushnil(L); lua_next(L, index); lua_pop(L, 1)) {
    lua_pushvalue(L, -2);  // tostring on a copy: lua_next needs the key as it was
    std::string key = luaL_tolstring(L, -1, nullptr);
    lua_pop(L, 2);
    members[key] = value(L, -1, depth + 1);
  }
  std::string out = "{";
  for (const auto &[key, text] : members)
    out += (out.size() > 1 ? "," : "") + json_string(key) + ":" + text;
  return out + "}";
}

std::string value(lua_State *L, int index, int depth) {
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN: return lua_toboolean(L, index) ? "true" : "false";
    case LUA_TNUMBER: return number(L, index);
    case LUA_TSTRING: return json_string(lua_tostring(L, index));
    case LUA_TTABLE: return table(L, index, depth);
    default: return "null";
  }
}

}  // namespace

std::string lua_to_json(lua_State *L, int index) {
  return value(L, index, 0);
}

}  // namespace mt
