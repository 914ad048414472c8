#include "runtime/lua_script.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <lua.hpp>
#include <sstream>

#include "compiler/error.h"
#include "compiler/source_locator.h"
#include "runtime/output.h"
#include "runtime/script_params.h"

namespace mt {

namespace {

constexpr const char *kSelfKey = "moontrace.script";

bool is_identifier(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\n");
  size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "str(expr)" or "str(expr, 32)": a string read through a pointer.
bool parse_string_capture(const std::string &text, std::string &inner, int &size) {
  std::string t = trim(text);
  if (t.rfind("str(", 0) != 0 || t.back() != ')')
    return false;
  inner = t.substr(4, t.size() - 5);
  int depth = 0;
  for (size_t i = inner.size(); i-- > 0;) {
    char c = inner[i];
    depth += c == ')' || c == ']';
    depth -= c == '(' || c == '[';
    if (c == ',' && depth == 0) {
      size = std::atoi(inner.c_str() + i + 1);
      inner = trim(inner.substr(0, i));
      break;
    }
  }
  return true;
}

// Lua's own messages may span lines (require lists every path it tried):
// the first line is the error, the rest is detail for -v.
Error lua_error_to_one_line(const std::string &message) {
  size_t newline = message.find('\n');
  if (newline == std::string::npos)
    return Error(message);
  return Error(message.substr(0, newline), {}, message.substr(newline + 1));
}

}  // namespace

ScriptSource load_script_source(const std::string &name) {
  std::ifstream file(name);
  if (file) {
    std::stringstream text;
    text << file.rdbuf();
    return {name, text.str()};
  }
  std::string builtin =
      name.size() > 4 && name.substr(name.size() - 4) == ".lua" ? name : name + ".lua";
  if (name.find('/') == std::string::npos)
    if (const char *text = embedded_lua(builtin, kScriptFiles))
      return {builtin, text};
  throw Error("cannot read script '" + name +
              "': no such file, and no shipped script by that name (try 'moontrace list')");
}

// The functions scripts call; each finds its LuaScript in the registry.
struct LuaApi {
  static LuaScript &self(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, kSelfKey);
    auto *s = static_cast<LuaScript *>(lua_touserdata(L, -1));
    lua_pop(L, 1);
    return *s;
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
    LuaScript &s = self(L);
    Expression e{text, where};
    if (where.file == s.source_.path)
      e.where = locate_expression(s.source_.text, text, where);
    return e;
  }

  static void add_capture(lua_State *L, ProbeDecl &probe, const std::string &name,
                          const std::string &text) {
    if (!is_identifier(name) || name.rfind("__", 0) == 0)
      luaL_error(L, "capture name '%s' is not a C identifier", name.c_str());
    for (const auto &c : probe.captures)
      if (c.name == name)
        luaL_error(L, "capture '%s' is declared twice", name.c_str());
    Capture c;
    c.name = name;
    std::string inner;
    if (parse_string_capture(text, inner, c.string_size)) {
      c.is_string = true;
      if (c.string_size <= 0 || c.string_size > 4096)
        luaL_error(L, "capture '%s': string size must be 1..4096", name.c_str());
      c.expr = expression(L, inner, probe.where);
    } else {
      c.expr = expression(L, text, probe.where);
    }
    probe.captures.push_back(std::move(c));
  }

  // probe(NAME | {NAME, ALTERNATIVE...}, [SPEC], [HANDLER])
  static int probe(lua_State *L) {
    LuaScript &s = self(L);
    ProbeDecl p;
    p.id = static_cast<int>(s.decl_.probes.size());
    p.where = caller(L);
    if (lua_type(L, 1) == LUA_TSTRING) {
      p.alternatives.push_back(lua_tostring(L, 1));
    } else if (lua_type(L, 1) == LUA_TTABLE) {
      for (lua_Integer i = 1; lua_rawgeti(L, 1, i) == LUA_TSTRING; i++) {
        p.alternatives.push_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    if (p.alternatives.empty())
      return luaL_argerror(L, 1, "expected a probe name or a list of alternatives");
    int handler = 0;
    if (lua_type(L, 2) == LUA_TFUNCTION)
      handler = 2;
    else if (lua_type(L, 3) == LUA_TFUNCTION)
      handler = 3;
    if (lua_type(L, 2) == LUA_TTABLE) {
      lua_getfield(L, 2, "filter");
      if (lua_isstring(L, -1))
        p.predicate = expression(L, lua_tostring(L, -1), p.where);
      else if (!lua_isnil(L, -1))
        return luaL_error(L, "probe 'filter' must be a C expression in a string");
      lua_pop(L, 1);
      lua_getfield(L, 2, "capture");
      if (lua_istable(L, -1)) {
        int t = lua_gettop(L);
        // Array entries name builtins or fields captured under their own name.
        for (lua_Integer i = 1; lua_rawgeti(L, t, i) == LUA_TSTRING; i++) {
          std::string text = lua_tostring(L, -1);
          std::string name = text.rfind("args.", 0) == 0 ? text.substr(5) : text;
          add_capture(L, p, name, text);
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
        std::vector<std::pair<std::string, std::string>> named;
        for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1)) {
          if (lua_type(L, -2) != LUA_TSTRING)
            continue;
          if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "capture '%s' must be a C expression in a string",
                              lua_tostring(L, -2));
          named.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
        }
        std::sort(named.begin(), named.end());  // deterministic C, stable cache keys
        for (const auto &[name, text] : named)
          add_capture(L, p, name, text);
      } else if (!lua_isnil(L, -1)) {
        return luaL_error(L, "probe 'capture' must be a table of name = \"C expression\"");
      }
      lua_pop(L, 1);
    } else if (!lua_isnoneornil(L, 2) && handler != 2) {
      return luaL_argerror(L, 2, "expected a table (filter, capture) or a handler function");
    }
    if (handler) {
      lua_pushvalue(L, handler);
      s.handlers_[p.id] = luaL_ref(L, LUA_REGISTRYINDEX);
      p.has_handler = true;
    }
    s.decl_.probes.push_back(std::move(p));
    return 0;
  }

  // param(NAME, {type=, default=, help=, short=}) -> value
  static int param(lua_State *L) {
    LuaScript &s = self(L);
    Param p;
    p.name = luaL_checkstring(L, 1);
    p.where = caller(L);
    if (!is_identifier(p.name))
      return luaL_argerror(L, 1, "parameter names must be C identifiers");
    for (const auto &other : s.decl_.params)
      if (other.name == p.name)
        return luaL_error(L, "parameter '%s' is declared twice", p.name.c_str());
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_getfield(L, 2, "type");
    bool ok = true;
    p.type = parse_param_type(luaL_optstring(L, -1, "int"), ok);
    if (!ok)
      return luaL_error(L, "parameter '%s': type must be int, uint, bool or string",
                        p.name.c_str());
    lua_getfield(L, 2, "default");
    if (lua_isboolean(L, -1))
      p.default_text = lua_toboolean(L, -1) ? "true" : "false";
    else if (!lua_isnil(L, -1))
      p.default_text = luaL_tolstring(L, -1, nullptr);
    else
      p.default_text = p.type == ParamType::Bool ? "false" : p.type == ParamType::String ? "" : "0";
    lua_getfield(L, 2, "help");
    p.help = luaL_optstring(L, -1, "");
    lua_getfield(L, 2, "short");
    p.short_name = luaL_optstring(L, -1, "");
    std::string why;
    if (!validate_param(p.type, p.default_text, why))
      return luaL_error(L, "parameter '%s': bad default '%s': %s", p.name.c_str(),
                        p.default_text.c_str(), why.c_str());
    try {
      p.value_text = s.args_.take_value(p);
    } catch (const Error &e) {
      return luaL_error(L, "%s", e.what());
    }
    push_param_value(L, p);
    lua_getglobal(L, "params");
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, p.name.c_str());
    lua_pop(L, 1);
    s.decl_.params.push_back(std::move(p));
    return 1;
  }

  static void push_param_value(lua_State *L, const Param &p) {
    const std::string &v = p.value_text;
    switch (p.type) {
      case ParamType::Int: lua_pushinteger(L, std::strtoll(v.c_str(), nullptr, 0)); break;
      case ParamType::Uint:
        lua_pushinteger(L, (lua_Integer)std::strtoull(v.c_str(), nullptr, 0));
        break;
      case ParamType::Bool: lua_pushboolean(L, v == "true" || v == "1" || v == "yes"); break;
      case ParamType::String: lua_pushstring(L, v.c_str()); break;
    }
  }

  // print and printf write to the script's output (stdout or -o FILE).
  static int print(lua_State *L) {
    LuaScript &s = self(L);
    std::string line;
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
      if (i > 1)
        line += '\t';
      line += luaL_tolstring(L, i, nullptr);
      lua_pop(L, 1);
    }
    s.output_.write(line + "\n");
    return 0;
  }

  static int printf(lua_State *L) {
    LuaScript &s = self(L);
    lua_getglobal(L, "string");
    lua_getfield(L, -1, "format");
    lua_insert(L, 1);
    lua_pop(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    s.output_.write(std::string(text, len));
    return 0;
  }

  static int exit(lua_State *L) {
    self(L).exit_requested_ = true;
    return 0;
  }
};

LuaScript::LuaScript(ScriptSource source, const SandboxOptions &sandbox, ScriptArgs &args,
                     Output &output)
    : L_(new_sandboxed_state(sandbox)), source_(std::move(source)), args_(args), output_(output) {
  decl_.script_path = source_.path;
  lua_pushlightuserdata(L_, this);
  lua_setfield(L_, LUA_REGISTRYINDEX, kSelfKey);
  const luaL_Reg api[] = {{"probe", LuaApi::probe},
                          {"param", LuaApi::param},
                          {"print", LuaApi::print},
                          {"printf", LuaApi::printf},
                          {"exit", LuaApi::exit}};
  for (const auto &f : api) {
    lua_pushcfunction(L_, f.func);
    lua_setglobal(L_, f.name);
  }
  lua_newtable(L_);
  lua_setglobal(L_, "params");
}

LuaScript::~LuaScript() {
  lua_close(L_);
}

void LuaScript::declare() {
  std::string chunk = "@" + source_.path;
  if (luaL_loadbufferx(L_, source_.text.data(), source_.text.size(), chunk.c_str(), "t") !=
          LUA_OK ||
      lua_pcall(L_, 0, 0, 0) != LUA_OK) {
    std::string message = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error in script";
    lua_pop(L_, 1);
    throw lua_error_to_one_line(message);
  }
}

void LuaScript::call_handler_on_stack(int nargs) {
  if (lua_pcall(L_, nargs, 0, 0) != LUA_OK) {
    std::string message = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error in handler";
    lua_pop(L_, 1);
    throw lua_error_to_one_line(message);
  }
}

void LuaScript::call_event(int decl_id, const std::function<void(lua_State *)> &fill) {
  auto it = handlers_.find(decl_id);
  if (it == handlers_.end())
    return;
  lua_rawgeti(L_, LUA_REGISTRYINDEX, it->second);
  lua_createtable(L_, 0, 8);
  fill(L_);
  call_handler_on_stack(1);
}

void LuaScript::call(int decl_id) {
  auto it = handlers_.find(decl_id);
  if (it == handlers_.end())
    return;
  lua_rawgeti(L_, LUA_REGISTRYINDEX, it->second);
  call_handler_on_stack(0);
}

}  // namespace mt
