// Creates the Lua state with a memory ceiling, trimmed globals and safe module searchers.
#include "script/lua_sandbox.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lua.hpp>
#include <new>

#include "common/embedded_files.h"
#include "common/error.h"
#include "script/script_file.h"
#include "script/script_search.h"

namespace mt {

namespace {

// The files along `path` (Lua's "dir/?.lua;..." templates) that exist for
// module `name` ("a.b" is a/b), in order; in `tried` the files that do
// not, as package.searchpath words them.
std::vector<std::string> find_modules(const std::string &name, const std::string &path,
                                      std::string &tried) {
  std::string relative = name;
  for (auto &c : relative)
    if (c == '.')
      c = '/';
  std::vector<std::string> found;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(';', start);
    if (end == std::string::npos)
      end = path.size();
    std::string file = path.substr(start, end - start);
    start = end + 1;
    for (size_t q; (q = file.find('?')) != std::string::npos;)
      file.replace(q, 1, relative);
    struct stat st;
    if (!file.empty() && stat(file.c_str(), &st) == 0)
      found.push_back(file);
    else
      tried += (tried.empty() ? "no file '" : "\n\tno file '") + file + "'";
  }
  return found;
}

// Where modules are looked for, set once at the state's creation: a
// script that sets package.path (to /root/secret/?.conf, say) changes
// nothing, or any file root could read would be loaded and shown.
constexpr const char *kModulePathKey = "moontrace.module_path";

// The module files for `name` along the module path, in order.
std::vector<std::string> module_files(lua_State *L, const std::string &name, std::string &tried) {
  lua_getfield(L, LUA_REGISTRYINDEX, kModulePathKey);
  std::vector<std::string> found = find_modules(name, lua_tostring(L, -1), tried);
  lua_pop(L, 1);
  return found;
}

// When `require name` gets `used` and `hidden` are modules of that name
// too: a line for the script's notices, kept in the registry's
// kShadowedKey list.
void note_hidden(lua_State *L, const std::string &name, const std::string &used,
                 const std::vector<std::string> &hidden) {
  if (hidden.empty())
    return;
  std::string others;
  for (const auto &h : hidden)
    others += (others.empty() ? "" : ", ") + h;
  luaL_where(L, 2);  // the require's line: level 1 is require itself
  lua_pushfstring(L, "require '%s' gets %s, which hides %s", name.c_str(), used.c_str(),
                  others.c_str());
  lua_concat(L, 2);
  if (lua_getfield(L, LUA_REGISTRYINDEX, kShadowedKey) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kShadowedKey);
  }
  lua_insert(L, -2);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
}

// package.searchers entry for the stdlib built into the binary, and the
// shipped scripts: `require "uring"` adds uring.lua's probes and drawings
// to the requiring script's, and gives its API.
int search_stdlib(lua_State *L) {
  std::string name = luaL_checkstring(L, 1);
  for (auto &c : name)
    if (c == '.')
      c = '/';
  const char *folder = "stdlib/";
  const char *source = embedded_lua(name + ".lua", kLuaFiles);
  if (!source && (source = embedded_lua(name + ".lua", kScriptFiles)))
    folder = "scripts/";
  if (!source) {
    lua_pushfstring(L, "no built-in module '%s'", name.c_str());
    return 1;
  }
  std::string chunk = "@" + std::string(folder) + name + ".lua", tried;
  note_hidden(L, name, "moontrace's own " + chunk.substr(1), module_files(L, name, tried));
  if (luaL_loadbufferx(L, source, std::strlen(source), chunk.c_str(), "t") != LUA_OK)
    return lua_error(L);
  lua_pushstring(L, chunk.c_str() + 1);
  return 2;
}

// Notes in kFileModulesKey that `require NAME` read SOURCE from a file.
void remember_file_module(lua_State *L, const char *name, const std::string &source) {
  lua_getfield(L, LUA_REGISTRYINDEX, kFileModulesKey);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kFileModulesKey);
  }
  lua_pushlstring(L, source.data(), source.size());
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

constexpr const char *kPackagedKey = "moontrace.packaged_modules";
constexpr const char *kPackingKey = "moontrace.packing";

// A packaged module's chunk name: its messages and #line say NAME.lua.
std::string packaged_chunk(const char *name) {
  return std::string("@") + name + ".lua";
}

bool packing(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kPackingKey);
  bool on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on;
}

// package.searchers entry for Lua files along package.path. Unlike Lua's
// own, it loads text only (bytecode is unchecked and could escape the
// sandbox), and only files that nobody but root, the user and the sudo
// user can change (see trusted_path.h).
int search_text_files(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  // Found by stat(), not by opening as package.searchpath does: opening a
  // FIFO planted where modules are looked for would wait for its writer.
  {
    std::string tried;
    std::vector<std::string> found = module_files(L, name, tried);
    if (found.empty()) {
      lua_pushstring(L, tried.c_str());
      return 1;
    }
    note_hidden(L, name, found[0], {found.begin() + 1, found.end()});
    lua_pushstring(L, found[0].c_str());
    lua_pushnil(L);
  }
  // C++ objects live in this block only: lua_error() longjmps past frames.
  bool loaded;
  {
    std::string file = lua_tostring(L, -2);
    std::string text, refusal;
    try {
      auto read = read_script_file(file);
      if (!read)
        throw Error("cannot read " + file + ": it is gone");
      text = std::move(*read);
    } catch (const Error &e) {
      refusal = e.what();
    }
    if (!refusal.empty()) {
      // Blamed on the line of the require: level 1 is require itself.
      luaL_where(L, 2);
      lua_pushstring(L, refusal.c_str());
      lua_concat(L, 2);
      loaded = false;
    } else {
      std::string chunk = packing(L) ? packaged_chunk(name) : "@" + file;
      loaded = luaL_loadbufferx(L, text.data(), text.size(), chunk.c_str(), "t") == LUA_OK;
      if (!loaded)
        lua_pushfstring(L, "error loading module '%s' from file '%s':\n\t%s", name, file.c_str(),
                        lua_tostring(L, -1));
      else
        lua_pushstring(L, file.c_str());
      if (loaded)
        remember_file_module(L, name, text);
    }
  }
  return loaded ? 2 : lua_error(L);
}

// package.searchers entry for a package's modules (kPackagedKey).
int search_packaged(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, kPackagedKey);
  lua_getfield(L, -1, name);
  if (!lua_isstring(L, -1)) {
    lua_pushfstring(L, "no module '%s' in the package", name);
    return 1;
  }
  size_t size = 0;
  const char *source = lua_tolstring(L, -1, &size);
  std::string chunk = packaged_chunk(name);
  if (luaL_loadbufferx(L, source, size, chunk.c_str(), "t") != LUA_OK)
    return lua_error(L);
  lua_pushstring(L, chunk.c_str() + 1);
  return 2;
}

// The allocator of every script's state: Lua's own, with a ceiling. An
// allocation past it fails, which Lua raises as "not enough memory"; where
// the script was is noted first, because that error carries no place.
struct MemoryBudget {
  size_t used = 0;
  size_t limit = 0;
  lua_State *L = nullptr;  // set once the state exists
  std::string refused_at;  // "script.lua:12", at the first refusal
};

// The innermost Lua function running, as "file:line". Safe inside the
// allocator in Lua 5.4.4, which grows stacks by allocating anew and copying
// afterwards (5.4.6 relocates first, leaving frames unreadable meanwhile).
std::string running_line(lua_State *L) {
#if LUA_VERSION_RELEASE_NUM <= 50405
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); level++)
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0)
      return std::string(ar.source[0] == '@' ? ar.source + 1 : ar.short_src) + ":" +
             std::to_string(ar.currentline);
#endif
  return "";
}

void *budgeted_alloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
  auto *budget = static_cast<MemoryBudget *>(ud);
  if (!ptr)
    old_size = 0;  // then it is the kind of object being made, not a size
  if (new_size == 0) {
    std::free(ptr);
    budget->used -= old_size;
    return nullptr;
  }
  if (new_size > old_size && new_size - old_size > budget->limit - budget->used) {
    if (budget->L && budget->refused_at.empty())
      budget->refused_at = running_line(budget->L);
    return nullptr;
  }
  void *grown = std::realloc(ptr, new_size);
  if (grown)
    budget->used = budget->used - old_size + new_size;
  return grown;
}

int panic(lua_State *L) {
  const char *message = lua_tostring(L, -1);
  std::fprintf(stderr, "moontrace: Lua: %s\n", message ? message : "unprotected error");
  std::fflush(stderr);
  std::abort();
}

void remove_global(lua_State *L, const char *name) {
  lua_pushnil(L);
  lua_setglobal(L, name);
}

}  // namespace

void close_sandboxed_state(lua_State *L) {
  void *budget;
  lua_getallocf(L, &budget);
  lua_close(L);
  delete static_cast<MemoryBudget *>(budget);
}

std::string memory_refusal(lua_State *L) {
  void *ud;
  if (lua_getallocf(L, &ud) != budgeted_alloc)
    return "";
  auto *budget = static_cast<MemoryBudget *>(ud);
  if (budget->refused_at.empty() && budget->used + (1 << 20) < budget->limit)
    return "";
  std::string where = budget->refused_at.empty() ? "" : budget->refused_at + ": ";
  return where + "the script needs more than its " + std::to_string(budget->limit >> 20) +
         " MiB of Lua memory";
}

const char *embedded_lua(const std::string &file_name, const std::vector<EmbeddedFile> &files) {
  for (const auto &f : files)
    if (file_name == f.name)
      return f.content;
  return nullptr;
}

std::vector<std::string> module_dirs_for(const std::string &script_path) {
  std::vector<std::string> dirs = moontrace_path();
  size_t slash = script_path.rfind('/');
  dirs.insert(dirs.begin(), slash == std::string::npos ? "." : script_path.substr(0, slash));
  return dirs;
}

lua_State *new_sandboxed_state(const SandboxOptions &options) {
  auto *budget = new MemoryBudget;
  budget->limit = options.memory_limit;
  lua_State *L = lua_newstate(budgeted_alloc, budget);
  if (!L) {
    delete budget;
    throw std::bad_alloc();
  }
  budget->L = L;
  lua_atpanic(L, panic);
  const luaL_Reg safe_libs[] = {
      {LUA_GNAME, luaopen_base},          {LUA_LOADLIBNAME, luaopen_package},
      {LUA_COLIBNAME, luaopen_coroutine}, {LUA_TABLIBNAME, luaopen_table},
      {LUA_STRLIBNAME, luaopen_string},   {LUA_MATHLIBNAME, luaopen_math},
      {LUA_UTF8LIBNAME, luaopen_utf8},
  };
  for (const auto &lib : safe_libs) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  if (options.unsafe) {
    const luaL_Reg unsafe_libs[] = {
        {LUA_IOLIBNAME, luaopen_io}, {LUA_OSLIBNAME, luaopen_os}, {LUA_DBLIBNAME, luaopen_debug}};
    for (const auto &lib : unsafe_libs) {
      luaL_requiref(L, lib.name, lib.func, 1);
      lua_pop(L, 1);
    }
  } else {
    for (const char *name : {"dofile", "loadfile", "load"})
      remove_global(L, name);
  }

  // require: built-in stdlib first, then Lua files in the module dirs;
  // never C modules.
  lua_getglobal(L, LUA_LOADLIBNAME);
  std::string path;
  for (const auto &dir : options.module_dirs)
    path += (path.empty() ? "" : ";") + dir + "/?.lua;" + dir + "/?/init.lua";
  lua_pushstring(L, path.c_str());
  lua_setfield(L, LUA_REGISTRYINDEX, kModulePathKey);
  lua_pushstring(L, path.c_str());  // for scripts to read
  lua_setfield(L, -2, "path");
  lua_pushstring(L, "");
  lua_setfield(L, -2, "cpath");
  if (!options.unsafe) {
    lua_pushnil(L);
    lua_setfield(L, -2, "loadlib");
  }
  lua_getfield(L, -1, "searchers");  // package, searchers
  lua_newtable(L);                   // package, searchers, ours
  lua_rawgeti(L, -2, 1);             // package.preload
  lua_rawseti(L, -2, 1);
  lua_pushcfunction(L, search_stdlib);
  lua_rawseti(L, -2, 2);
  lua_pushcfunction(L, options.from_package ? search_packaged : search_text_files);
  lua_rawseti(L, -2, 3);
  lua_setfield(L, -3, "searchers");
  lua_pop(L, 2);
  lua_newtable(L);
  for (const auto &[name, source] : options.packaged_modules) {
    lua_pushlstring(L, source.data(), source.size());
    lua_setfield(L, -2, name.c_str());
  }
  lua_setfield(L, LUA_REGISTRYINDEX, kPackagedKey);
  lua_pushboolean(L, options.packing);
  lua_setfield(L, LUA_REGISTRYINDEX, kPackingKey);
  return L;
}

}  // namespace mt
