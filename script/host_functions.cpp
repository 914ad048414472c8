// print, printf, notice, report, exit, lost, strftime, output_is_trace: what a running script
// says and asks.
#include <cstdio>
#include <ctime>

#include "output/output.h"
#include "script/lua_api.h"
#include "script/lua_json.h"

namespace mt {

struct LuaHostFunctions : LuaApi {
  // notice(FORMAT, ...): one line for stderr, "moontrace: SCRIPT: text", for
  // what the user must know even without -v (e.g. what cannot be traced);
  // printed once the script's options are known to be right.
  static int notice(lua_State *L) {
    LuaScript &s = self(L);
    std::string text = formatted(L);
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    std::string name = s.source_.path.substr(s.source_.path.rfind('/') + 1);
    s.notices_.push_back(name + ": " + text);
    return 0;
  }

  // output_is_trace() -> whether -o names a trace (*.fxt, *.fxt.gz): a
  // script that prints can then draw too, declaring fxt{} only then.
  static int output_is_trace(lua_State *L) {
    const std::string &path = self(L).output_path_;
    auto ends_with = [&](const std::string &end) {
      return path.size() > end.size() &&
             path.compare(path.size() - end.size(), end.size(), end) == 0;
    };
    lua_pushboolean(L, ends_with(".fxt") || ends_with(".fxt.gz"));
    return 1;
  }

  // strftime([FORMAT]) -> the local time, "%H:%M:%S" by default.
  static int strftime(lua_State *L) {
    const char *format = luaL_optstring(L, 1, "%H:%M:%S");
    time_t now = time(nullptr);
    struct tm local;
    localtime_r(&now, &local);
    char text[256];
    size_t n = std::strftime(text, sizeof(text), format, &local);
    lua_pushlstring(L, text, n);
    return 1;
  }

  // print and printf write to the script's output (stdout or -o FILE).
  static int print(lua_State *L) {
    LuaScript &s = self(L);
    std::string line;
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
      if (i > 1)
        line += '\t';
      size_t len;
      const char *text = luaL_tolstring(L, i, &len);
      line.append(text, len);  // whole: strings may hold NUL bytes
      lua_pop(L, 1);
    }
    s.output_.printed(line + "\n");
    return 0;
  }

  // string.format(...) of the function's arguments.
  static std::string formatted(lua_State *L) {
    lua_getglobal(L, "string");
    lua_getfield(L, -1, "format");
    lua_insert(L, 1);
    lua_pop(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    return std::string(text, len);
  }

  static int printf(lua_State *L) {
    self(L).output_.printed(formatted(L));
    return 0;
  }

  static int exit(lua_State *L) {
    self(L).exit_requested_ = true;
    return 0;
  }

  // Events lost so far, all probes together (0 before tracing starts).
  static int lost(lua_State *L) {
    LuaScript &s = self(L);
    lua_pushinteger(L, s.lost_ ? static_cast<lua_Integer>(s.lost_()) : 0);
    return 1;
  }

  // report{type = "summary", data = {...}, text = "..."}: a report such as
  // a summary at exit; with -f json its data as {"type":..,"data":..} in
  // the output, otherwise its text on stderr, apart from traced output.
  static int report(lua_State *L) {
    LuaScript &s = self(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    if (s.output_.json()) {
      bool converted = false;
      {
        std::string type = optional_string(L, 1, "type", "report");
        lua_getfield(L, 1, "data");
        try {
          std::string data = lua_to_json(L, -1);
          s.output_.write(json_message(type, data) + "\n");
          converted = true;
        } catch (const Error &e) {
          lua_pushfstring(L, "report '%s': %s", type.c_str(), e.what());
        }
      }
      // Raised once the C++ values above are gone: lua_error does not unwind them.
      if (!converted)
        return raise_where(L);
      lua_pop(L, 1);
    } else {
      std::string text = optional_string(L, 1, "text", "");
      std::fwrite(text.data(), 1, text.size(), stderr);
    }
    return 0;
  }
};

void install_host_functions(lua_State *L) {
  set_global_functions(L, {{"print", LuaHostFunctions::print},
                           {"printf", LuaHostFunctions::printf},
                           {"exit", LuaHostFunctions::exit},
                           {"notice", LuaHostFunctions::notice},
                           {"strftime", LuaHostFunctions::strftime},
                           {"output_is_trace", LuaHostFunctions::output_is_trace},
                           {"lost", LuaHostFunctions::lost},
                           {"report", LuaHostFunctions::report}});
}

}  // namespace mt
