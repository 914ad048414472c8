// Converts a Lua value to JSON text without running metamethods or raising Lua errors.
#include "script/lua_json.h"

#include <cmath>
#include <cstdio>
#include <lua.hpp>
#include <map>
#include <set>

#include "common/error.h"
#include "run/record_decoder.h"

namespace mt {
namespace {

// Converts without calling Lua functions (no __tostring, no __index) and
// without raising Lua errors: a Lua error would jump over the C++ frames
// below, and a metamethod could run anything. Problems throw mt::Error.
class JsonWriter {
 public:
  explicit JsonWriter(lua_State *L) : L_(L) {}

  std::string value(int index, int depth) {
    switch (lua_type(L_, index)) {
      case LUA_TBOOLEAN: return lua_toboolean(L_, index) ? "true" : "false";
      case LUA_TNUMBER: return number(index);
      case LUA_TSTRING: return json_string(string_at(index));
      case LUA_TTABLE: return table(index, depth);
      default: return "null";
    }
  }

 private:
  std::string string_at(int index) {
    size_t len;
    const char *text = lua_tolstring(L_, index, &len);
    return std::string(text, len);
  }

  std::string number(int index) {
    if (lua_isinteger(L_, index))
      return std::to_string(lua_tointeger(L_, index));
    double d = lua_tonumber(L_, index);
    if (!std::isfinite(d))
      return "null";
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", d);
    return text;
  }

  // An object's key as text: strings and numbers; other keys have no JSON name.
  std::string key_text(int index) {
    switch (lua_type(L_, index)) {
      case LUA_TSTRING: return string_at(index);
      case LUA_TNUMBER: return number(index);
      case LUA_TBOOLEAN: return lua_toboolean(L_, index) ? "true" : "false";
      default:
        throw Error(std::string("a table with a key of type ") + luaL_typename(L_, index) +
                    " cannot be JSON");
    }
  }

  std::string table(int index, int depth) {
    index = lua_absindex(L_, index);
    const void *self = lua_topointer(L_, index);
    if (open_.count(self))
      throw Error("a table that contains itself (a cycle) cannot be JSON");
    if (depth >= kMaxDepth)
      throw Error("a table nested more than " + std::to_string(kMaxDepth) + " deep cannot be JSON");
    // Each level holds a key, a value and a copy: room for them, checked
    // rather than assumed (LUA_MINSTACK is 20 slots).
    if (!lua_checkstack(L_, 4))
      throw Error("a table nested too deep to be JSON");
    open_.insert(self);
    std::string out = members(index, depth);
    open_.erase(self);
    return out;
  }

  std::string members(int index, int depth) {
    lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L_, index));
    size_t keys = 0;
    for (lua_pushnil(L_); lua_next(L_, index); lua_pop(L_, 1))
      keys++;
    if (static_cast<size_t>(n) ==
        keys) {  // {} too: an empty list, far likelier than an empty record
      std::string out = "[";
      for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L_, index, i);
        std::string item = value(-1, depth + 1);
        lua_pop(L_, 1);
        out += (i > 1 ? "," : "") + item;
      }
      return out + "]";
    }
    std::map<std::string, std::string> fields;
    for (lua_pushnil(L_); lua_next(L_, index); lua_pop(L_, 1)) {
      std::string key = key_text(-2);
      fields[key] = value(-1, depth + 1);
    }
    std::string out = "{";
    for (const auto &[key, text] : fields)
      out += (out.size() > 1 ? "," : "") + json_string(key) + ":" + text;
    return out + "}";
  }

  static constexpr int kMaxDepth = 64;
  lua_State *L_;
  std::set<const void *> open_;  // tables being written: one met again is a cycle
};

}  // namespace

std::string lua_to_json(lua_State *L, int index) {
  int top = lua_gettop(L);  // restored when a problem leaves values pushed
  try {
    return JsonWriter(L).value(index, 0);
  } catch (const Error &) {
    lua_settop(L, top);
    throw;
  }
}

}  // namespace mt
