// A script's Lua state: finds the script, runs its body, then its handlers.
#include "script/lua_script.h"

#include <sys/stat.h>

#include <lua.hpp>

#include "common/embedded_files.h"
#include "common/error.h"
#include "kernel/probe_resolver.h"
#include "output/aggregation_format.h"
#include "output/output.h"
#include "run/kernel_maps.h"
#include "script/lua_api.h"
#include "script/lua_interrupt.h"
#include "script/lua_sandbox.h"
#include "script/script_file.h"
#include "script/script_params.h"
#include "script/script_search.h"

namespace mt {

namespace {

// Lua's own messages may span lines (require lists every path it tried):
// the first line is the error, the rest is detail for -v. Running out of
// the state's memory says where and how much instead of Lua's bare words.
Error lua_error_to_one_line(lua_State *L, const std::string &message) {
  if (message == "not enough memory")
    if (std::string refusal = memory_refusal(L); !refusal.empty())
      return Error(refusal);
  // require's "module 'x' not found:\n\tno file 'a'\n\t...": where it
  // looked is what the user needs, so it stays on the line.
  if (message.find("' not found:\n\t") != std::string::npos) {
    std::string line;
    for (size_t i = 0; i < message.size(); i++)
      if (message.compare(i, 2, "\n\t") == 0) {
        line += !line.empty() && line.back() == ':' ? " " : "; ";
        i++;
      } else {
        line += message[i];
      }
    return Error(line);
  }
  size_t newline = message.find('\n');
  if (newline == std::string::npos)
    return Error(message);
  return Error(message.substr(0, newline), {}, message.substr(newline + 1));
}

// Whether MESSAGE starts with a place, "file:line: ".
bool located(const std::string &message) {
  size_t colon = message.find(':');
  size_t digits =
      colon == std::string::npos ? colon : message.find_first_not_of("0123456789", colon + 1);
  return colon != std::string::npos && colon > 0 && digits != std::string::npos &&
         digits > colon + 1 && message.compare(digits, 2, ": ") == 0;
}

// pcall's message handler. An error a library function raised (string.format
// called by printf, say) has no place, nor has an error value that is no
// string ({} or nil): they get the script's line running then. The value's
// __tostring is not called: it is the script's, and could raise or loop.
int locate_error(lua_State *L) {
  std::string message = lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER
                            ? lua_tostring(L, 1)
                            : std::string("error object is a ") + luaL_typename(L, 1) + " value";
  if (located(message)) {
    lua_pushstring(L, message.c_str());
    return 1;
  }
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++)
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, message.c_str());
      return 1;
    }
  lua_pushstring(L, message.c_str());
  return 1;
}

// Calls the function under NARGS arguments on L's stack, as lua_pcall
// does, with locate_error as the message handler.
int pcall_located(lua_State *L, int nargs, int nresults) {
  int handler = lua_gettop(L) - nargs;
  lua_pushcfunction(L, locate_error);
  lua_insert(L, handler);
  int status = lua_pcall(L, nargs, nresults, handler);
  lua_remove(L, handler);
  return status;
}

}  // namespace

void report_hidden(const ScriptSource &source) {
  std::string hidden;
  for (const auto &h : source.hides)
    hidden += (hidden.empty() ? "" : ", ") + h;
  if (!hidden.empty())
    std::fprintf(stderr, "moontrace: running %s, which hides %s (run that by its path)\n",
                 source.path.c_str(), hidden.c_str());
}

ScriptSource load_script_source(const std::string &name) {
  std::string base = name.size() > 4 && name.substr(name.size() - 4) == ".lua"
                         ? name.substr(0, name.size() - 4)
                         : name;
  std::vector<FoundScript> found;
  if (name.find('/') == std::string::npos)
    found = find_scripts(base);
  // A path, or a file here by that name; a directory named like a script
  // does not hide the script.
  struct stat st;
  if (!(!found.empty() && stat(name.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
    if (auto text = read_script_file(name))
      return {name, *text};
  if (found.empty())
    throw Error("cannot read script '" + name +
                "': no such file, and no script by that name (try 'moontrace list')");
  ScriptSource source;
  if (found[0].shipped) {
    source = {base + ".lua", embedded_lua(base + ".lua", kScriptFiles), true};
  } else {
    auto text = read_script_file(found[0].path);
    if (!text)
      throw Error("cannot read script '" + found[0].path + "': it is gone");
    source = {found[0].path, *text};
  }
  for (size_t i = 1; i < found.size(); i++)
    source.hides.push_back(found[i].path);
  return source;
}

LuaScript::LuaScript(ScriptSource source, const SandboxOptions &sandbox, ScriptArgs &args,
                     Output &output)
    : L_(new_sandboxed_state(sandbox)),
      source_(std::move(source)),
      source_index_(source_.text),
      args_(&args),
      output_(output) {
  decl_.script_path = source_.path;
  lua_pushlightuserdata(L_, this);
  lua_setfield(L_, LUA_REGISTRYINDEX, kSelfKey);
  install_declaration_builders(L_);
  install_kernel_queries(L_);
  install_host_functions(L_);
  install_script_info(L_);
  install_map_handles(L_);
}

LuaScript::~LuaScript() {
  // A finalizer that never returns would keep moontrace from leaving.
  arm_lua_close(L_, std::chrono::seconds(1));
  close_sandboxed_state(L_);
  lua_call_ended();
}

KernelFacts &LuaScript::kernel() {
  if (!kernel_) {
    own_kernel_ = std::make_unique<KernelFacts>();
    kernel_ = own_kernel_.get();
  }
  return *kernel_;
}

void LuaScript::declare(const std::vector<More> &more) {
  run_top_level(source_);
  for (const More &m : more) {
    if (stopped_for_help_)
      break;
    args_ = m.args;
    first_param_ = decl_.params.size();
    run_top_level(m.source);
  }
  declared_ = true;
  if (lua_getfield(L_, LUA_REGISTRYINDEX, kShadowedKey) == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L_, -1, i) == LUA_TSTRING; i++) {
      notices_.push_back(lua_tostring(L_, -1));
      lua_pop(L_, 1);
    }
    lua_pop(L_, 1);  // what ended the list
  }
  lua_pop(L_, 1);
}

// A shipped script's top level is also the module of its name: a script
// run after it that requires it gets what it returned, not a second copy;
// one that a script before it required already is in the session.
void LuaScript::run_top_level(const ScriptSource &source) {
  bool shipped = source.shipped;
  std::string module = shipped ? source.path.substr(0, source.path.size() - 4) : "";
  lua_getfield(L_, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  int loaded = lua_gettop(L_);
  if (shipped && lua_getfield(L_, loaded, module.c_str()) != LUA_TNIL) {
    lua_pop(L_, 2);
    if (!args_->empty())
      throw Error("'" + module +
                  "' is in this session already (a script before it requires it): give its "
                  "options to that script");
    return;
  }
  lua_settop(L_, loaded);
  std::string chunk = "@" + source.path;
  int status = luaL_loadbufferx(L_, source.text.data(), source.text.size(), chunk.c_str(), "t");
  if (status == LUA_OK) {
    arm_lua_interrupt(L_);
    status = pcall_located(L_, 0, 1);
    lua_call_ended();
  }
  if (status != LUA_OK) {
    std::string message = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error in script";
    lua_pop(L_, 2);
    if (stopped_for_help_)
      return;
    throw_lua_error(message);
  }
  if (shipped) {
    if (lua_isnil(L_, -1)) {
      lua_pop(L_, 1);
      lua_pushboolean(L_, 1);
    }
    lua_setfield(L_, loaded, module.c_str());
  }
  lua_settop(L_, loaded - 1);
}

void LuaScript::throw_lua_error(const std::string &message) {
  // The interrupt hook's error, "x.lua:4: interrupted", or one the script
  // raised while being interrupted (a pcall that caught it, say).
  if (lua_was_interrupted()) {
    size_t end = message.rfind("interrupted");
    throw LuaInterrupted{end == std::string::npos ? "" : message.substr(0, end)};
  }
  Error e = lua_error_to_one_line(L_, message);
  const std::string &own = more_error_lines_.first;  // script{}'s message, after the place
  if (!own.empty() && message.size() > own.size() &&
      message.compare(message.size() - own.size(), own.size(), own) == 0)
    e.more_lines = std::move(more_error_lines_.second);
  more_error_lines_ = {};
  throw e;
}

void LuaScript::print_aggregation(int id) {
  AggregationSnapshot snap = maps_->aggregation(id);
  output_.write(output_.json()     ? aggregation_json(snap) + "\n"
                : output_.folded() ? aggregation_folded(snap)
                                   : aggregation_text(snap));
}

void LuaScript::print_map(int index) {
  MapSnapshot snap = maps_->map(index);
  output_.write(output_.json() ? map_json(snap) + "\n" : map_text(snap));
}

void LuaScript::call_handler_on_stack(int nargs) {
  arm_lua_interrupt(L_);
  int status = pcall_located(L_, nargs, 0);
  lua_call_ended();
  if (status != LUA_OK) {
    std::string message = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "error in handler";
    lua_pop(L_, 1);
    throw_lua_error(message);
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

std::map<std::string, std::string> LuaScript::file_modules() const {
  std::map<std::string, std::string> out;
  lua_getfield(L_, LUA_REGISTRYINDEX, kFileModulesKey);
  if (lua_istable(L_, -1)) {
    lua_pushnil(L_);
    while (lua_next(L_, -2)) {
      if (lua_type(L_, -2) == LUA_TSTRING && lua_type(L_, -1) == LUA_TSTRING) {
        size_t size = 0;
        const char *text = lua_tolstring(L_, -1, &size);
        out[lua_tostring(L_, -2)] = std::string(text, size);
      }
      lua_pop(L_, 1);
    }
  }
  lua_pop(L_, 1);
  return out;
}

}  // namespace mt
