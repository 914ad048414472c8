// Converts a Lua value to JSON text without running metamethods or raising Lua errors.
#include "script/lua_json.h"

#include <cmath>
#include <cstdio>
#include <lua.hpp>
#include <map>
#include <set>

#include "common/error.h"
#include "common/json_writer.h"

namespace mt {
namespace {

// Converts without calling Lua functions (no __tostring, no __index) and
// without raising Lua errors: a Lua error would jump over the C++ frames
// below, and a metamethod could run anything. Problems throw mt::Error.
class LuaToJson {
 public:
  explicit LuaToJson(lua_State *L) : L_(L) {}

  void value(int index, int depth, JsonWriter &out) {
    switch (lua_type(L_, index)) {
      case LUA_TBOOLEAN: out.boolean(lua_toboolean(L_, index)); break;
      case LUA_TNUMBER: out.raw(number(index)); break;
      case LUA_TSTRING: out.str(string_at(index)); break;
      case LUA_TTABLE: table(index, depth, out); break;
      default: out.null();
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

  void table(int index, int depth, JsonWriter &out) {
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
    members(index, depth, out);
    open_.erase(self);
  }

  void members(int index, int depth, JsonWriter &out) {
    lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L_, index));
    size_t keys = 0;
    for (lua_pushnil(L_); lua_next(L_, index); lua_pop(L_, 1))
      keys++;
    if (static_cast<size_t>(n) ==
        keys) {  // {} too: an empty list, far likelier than an empty record
      out.array();
      for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L_, index, i);
        value(-1, depth + 1, out);
        lua_pop(L_, 1);
      }
      out.end();
      return;
    }
    // Members in the order of their names, so that output is stable.
    std::map<std::string, std::string> fields;
    for (lua_pushnil(L_); lua_next(L_, index); lua_pop(L_, 1)) {
      std::string key = key_text(-2);
      JsonWriter member;
      value(-1, depth + 1, member);
      fields[key] = member.text();
    }
    out.object();
    for (const auto &[key, text] : fields)
      out.key(key).raw(text);
    out.end();
  }

  static constexpr int kMaxDepth = 64;
  lua_State *L_;
  std::set<const void *> open_;  // tables being written: one met again is a cycle
};

}  // namespace

std::string lua_to_json(lua_State *L, int index) {
  int top = lua_gettop(L);  // restored when a problem leaves values pushed
  try {
    JsonWriter out;
    LuaToJson(L).value(index, 0, out);
    return out.text();
  } catch (const Error &) {
    lua_settop(L, top);
    throw;
  }
}

}  // namespace mt
