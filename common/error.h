// One error type for every stage: a one-line message, optionally tied to
// a place in the script, with detail printed only under -v (and, where one
// mistake is several, such as a script's unmet requirements, a line each).
//
// The engine's one convention: a failure the user must hear of is thrown
// as an Error; what may simply be absent (a lookup, a kernel feature) is an
// std::optional, without a reason; no out-parameters carry error text.
// Lua's errors exist only at the boundary with scripts: functions scripts
// call raise with luaL_error, or turn an Error into Lua's with
// LuaApi::raising_errors (script/lua_api.h), and LuaScript turns what a
// script raises back into an Error at the script's line.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "common/declaration.h"

namespace mt {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string &message, ScriptLocation where = {}, std::string detail = {})
      : std::runtime_error(message), where(std::move(where)), detail(std::move(detail)) {}
  ScriptLocation where;
  std::string detail;                   // e.g. the verifier log, shown with -v
  std::vector<std::string> more_lines;  // errors of their own, "file:line: message", shown after

  // "script.lua:12: message" or just "message".
  std::string located() const {
    if (where.file.empty())
      return what();
    std::string loc = where.file;
    if (where.line > 0)
      loc += ":" + std::to_string(where.line);
    if (where.line > 0 && where.column > 0)
      loc += ":" + std::to_string(where.column);
    return loc + ": " + what();
  }
};

}  // namespace mt
