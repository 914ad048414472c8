// The Lua state scripts run in: standard libraries without file, process
// and code-loading access unless --unsafe, and a `require` that finds
// modules in the built-in stdlib, next to the script and in MOONTRACE_PATH.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/embedded_files.h"

struct lua_State;

namespace mt {

struct SandboxOptions {
  bool unsafe = false;                   // --unsafe: os, io, load*, dofile, debug
  std::vector<std::string> module_dirs;  // searched in order after the stdlib
  // A package's run: its modules (require name -> source) are searched
  // after the stdlib, and no file is (the package is all it runs).
  bool from_package = false;
  std::map<std::string, std::string> packaged_modules;
  // moontrace pack: modules read from files are named as the package will
  // name them (NAME.lua), for the generated C to be the same.
  bool packing = false;
  size_t memory_limit = size_t(1) << 30;  // bytes the Lua state may hold
};

// A new state with the sandboxed libraries open, holding at most
// options.memory_limit bytes; close it with close_sandboxed_state().
lua_State *new_sandboxed_state(const SandboxOptions &options);
void close_sandboxed_state(lua_State *L);

// After Lua's "not enough memory": "script.lua:LINE: the script needs more
// than its N MiB of Lua memory", or "" if the state was not at its limit.
std::string memory_refusal(lua_State *L);

// The registry's list of lines saying which modules in the module
// directories a built-in module of the same name hid.
inline constexpr const char *kShadowedKey = "moontrace.shadowed";

// The registry's table of the modules `require` read from files: require
// name -> source, for moontrace pack.
inline constexpr const char *kFileModulesKey = "moontrace.file_modules";

// Directories for `require`: the script's own, then each of MOONTRACE_PATH.
std::vector<std::string> module_dirs_for(const std::string &script_path);

// The source of a built-in file by name (kLuaFiles or kScriptFiles), or null.
const char *embedded_lua(const std::string &file_name, const std::vector<EmbeddedFile> &files);

}  // namespace mt
