// What the functions scripts call share: finding their LuaScript, where in
// the script a call stands, and reading its arguments. The functions
// themselves are grouped by job, a file each: declaration_builders.cpp
// (probe, map, count{}..., latency, param, fxt), kernel_queries.cpp
// (available, has_field, arguments, disk, ncpus), host_functions.cpp
// (print, printf, notice, report, exit, lost, strftime), script_info.cpp
// (script{}) and map_handles.cpp (what map and aggregation handles do
// while tracing).
#pragma once
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <lua.hpp>
#include <string>
#include <vector>

#include "codegen/source_locator.h"
#include "common/declaration.h"
#include "common/error.h"
#include "script/kernel_answers.h"
#include "script/lua_script.h"

namespace mt {

inline constexpr const char *kSelfKey = "moontrace.script";
inline constexpr size_t kMaxExpressionBytes = 16 << 10;
inline constexpr const char *kAggregationType = "moontrace.aggregation";
inline constexpr const char *kMapType = "moontrace.map";

// Reasons joined with "; ".
inline std::string joined(const std::vector<std::string> &reasons) {
  std::string out;
  for (const auto &r : reasons)
    out += (out.empty() ? "" : "; ") + r;
  return out;
}

// An optional string field of the table at `t`.
inline std::string optional_string(lua_State *L, int t, const char *field,
                                   const std::string &fallback) {
  lua_getfield(L, t, field);
  std::string v = lua_isnil(L, -1) ? fallback : luaL_checkstring(L, -1);
  lua_pop(L, 1);
  return v;
}

// What every group uses. A group is a struct deriving from this one, and
// a friend of LuaScript's.
struct LuaApi {
  static LuaScript &self(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, kSelfKey);
    auto *s = static_cast<LuaScript *>(lua_touserdata(L, -1));
    lua_pop(L, 1);
    return *s;
  }

  // Runs `f`; an Error it throws is raised as a Lua error at the caller's
  // place. The engine's errors are Errors; at this boundary, and only here,
  // they become Lua's. The raise comes after the handler, as a longjmp
  // out of a catch block would leave the exception undestroyed.
  template <class F>
  static decltype(auto) raising_errors(lua_State *L, F &&f) {
    try {
      return f();
    } catch (const Error &e) {
      luaL_where(L, 1);
      lua_pushstring(L, e.what());
      lua_concat(L, 2);
    }
    lua_error(L);
    std::abort();  // lua_error does not return
  }

  // Raises the message on top of the stack, with the caller's place.
  static int raise_where(lua_State *L) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
  }

  // Declaring is for the script's body: once it has run, the program is
  // generated and loaded, and a map or probe declared later has none.
  static void only_while_declaring(lua_State *L, const char *what) {
    if (self(L).declared_)
      luaL_error(L,
                 "%s declares; call it in the script's body, not in a handler (what the script "
                 "traces is fixed once it starts)",
                 what);
  }

  static ScriptLocation caller(lua_State *L) {
    lua_Debug ar;
    ScriptLocation where;
    where.file = self(L).source_.path;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
      where.line = ar.currentline;
      if (ar.source[0] == '@')
        where.file = ar.source + 1;
    }
    return where;
  }

  static Expression expression(lua_State *L, const std::string &text, const ScriptLocation &where) {
    // Compile time grows faster than the text (20,000 terms take Clang 25
    // s); longer tests belong in a map.
    if (text.size() > kMaxExpressionBytes)
      luaL_error(L,
                 "a C expression of %d bytes; at most %d are allowed (to test many values, keep "
                 "them in a map and use map_has)",
                 (int)text.size(), (int)kMaxExpressionBytes);
    LuaScript &s = self(L);
    Expression e{text, where};
    if (where.file == s.source_.path)
      e.where = locate_expression(s.source_.text, s.source_index_, text, where);
    return e;
  }

  // Probe names at index `i`: "name" or {"name", "alternative", ...}.
  static std::vector<std::string> probe_names(lua_State *L, int i, const char *what) {
    std::vector<std::string> names;
    if (lua_type(L, i) == LUA_TSTRING) {
      names.push_back(lua_tostring(L, i));
    } else if (lua_type(L, i) == LUA_TTABLE) {
      for (lua_Integer n = 1; lua_rawgeti(L, i, n) == LUA_TSTRING; n++) {
        names.push_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    if (names.empty())
      luaL_error(L, "%s: expected a probe name or a list of alternatives", what);
    return names;
  }

  // The first of NAMES this kernel has, answered once per kernel
  // (kernel_answers.h): {its index, or "" for none; why the ones before it
  // were passed over; "1" when it names probes, then its first probe's
  // argument names}. A name that does not parse is raised.
  static const KernelAnswers::Answer &probe_choice(lua_State *L,
                                                   const std::vector<std::string> &names);

  static int new_handle(lua_State *L, int id, const char *type) {
    *static_cast<int *>(lua_newuserdatauv(L, sizeof(int), 0)) = id;
    luaL_setmetatable(L, type);
    return 1;
  }
};

// Makes each function a global of the script's Lua state.
inline void set_global_functions(lua_State *L, std::initializer_list<luaL_Reg> functions) {
  for (const luaL_Reg &f : functions) {
    lua_pushcfunction(L, f.func);
    lua_setglobal(L, f.name);
  }
}

// Each puts its group's functions into the script's Lua state.
void install_declaration_builders(lua_State *L);
void install_kernel_queries(lua_State *L);
void install_host_functions(lua_State *L);
void install_script_info(lua_State *L);
void install_map_handles(lua_State *L);

}  // namespace mt
