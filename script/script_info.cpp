// script{}: what a script says of itself (name, version, help, examples) and needs of the kernel.
#include <sys/utsname.h>

#include <cstdio>
#include <regex>
#include <set>

#include "kernel/probe_resolver.h"
#include "script/lua_api.h"
#include "script/lua_script.h"
#include "script/script_params.h"

namespace mt {

namespace {

// "6.18.44-fc" -> {6, 18}; {0, 0} when it does not start so.
std::pair<int, int> major_minor(const std::string &release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2)
    return {0, 0};
  return {major, minor};
}

}  // namespace

struct LuaScriptInfo : LuaApi {
  // A string field, "" when absent; one line unless `lines`.
  static std::string text(lua_State *L, const char *field, bool lines = false) {
    std::string v = optional_string(L, 1, field, "");
    if (!lines && v.find('\n') != std::string::npos)
      luaL_error(L, "script{}: %s is one line", field);
    return v;
  }

  // A list of strings at field `field` of the table at `t` (a single string is a list of one).
  static std::vector<std::string> strings(lua_State *L, int t, const char *field) {
    std::vector<std::string> out;
    lua_getfield(L, t, field);
    if (lua_type(L, -1) == LUA_TSTRING) {
      out.push_back(lua_tostring(L, -1));
    } else if (lua_type(L, -1) == LUA_TTABLE) {
      for (lua_Integer n = 1; lua_rawgeti(L, -1, n) != LUA_TNIL; n++) {
        if (lua_type(L, -1) != LUA_TSTRING)
          luaL_error(L, "script{}: %s is a list of strings", field);
        out.push_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    } else if (!lua_isnil(L, -1)) {
      luaL_error(L, "script{}: %s is a list of strings", field);
    }
    lua_pop(L, 1);
    return out;
  }

  // Refuses a field not in `known` of the table at `t`: a misspelt
  // requirement would otherwise go unchecked.
  static void only_fields(lua_State *L, int t, const char *what,
                          const std::set<std::string> &known) {
    lua_pushnil(L);
    while (lua_next(L, t)) {
      lua_pop(L, 1);
      std::string key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?";
      if (!known.count(key))
        luaL_error(L, "%s: unknown field '%s'", what, key.c_str());
    }
  }

  // What this kernel lacks of a "feature" a script names.
  static std::string missing_feature(LuaScript &s, lua_State *L, const std::string &feature) {
    KernelFacts &k = s.kernel();
    if (feature == "btf")
      return k.btf() ? "" : "no kernel BTF (/sys/kernel/btf/vmlinux)";
    if (feature == "kprobes")
      return k.has_kprobes() ? "" : "no kprobes (CONFIG_KPROBES)";
    if (feature == "fentry")
      return k.fentry_unavailable_reason();
    if (feature == "kprobes_or_fentry")
      return k.has_kprobes() || k.fentry_unavailable_reason().empty()
                 ? ""
                 : "neither kprobes nor fentry: " + k.fentry_unavailable_reason();
    luaL_error(L, "script{}: unknown feature '%s' (btf, kprobes, fentry, kprobes_or_fentry)",
               feature.c_str());
    return "";
  }

  // script{name =, version =, description =, help =, examples = {...},
  //        requires = {api =, kernel = "5.10", features = {...},
  //                    probes = {NAME | {NAME, ALTERNATIVE...}, ...}, optional = {...}}}
  // Requirements are checked here, before the rest of the script runs:
  // each one this kernel lacks is a line of the error (under --help, a
  // line of the help).
  static int script(lua_State *L) {
    only_while_declaring(L, "script{}");
    luaL_checktype(L, 1, LUA_TTABLE);
    LuaScript &s = self(L);
    only_fields(L, 1, "script{}",
                {"name", "version", "description", "help", "examples", "requires"});
    ScriptInfo info;
    ScriptLocation where = caller(L);
    info.path = where.file;
    for (const auto &earlier : s.decl_.scripts)
      if (earlier.path == info.path)
        luaL_error(L, "script{} is called once per script");
    info.name = text(L, "name");
    info.version = text(L, "version");
    info.description = text(L, "description");
    info.help = text(L, "help", true);
    info.examples = strings(L, 1, "examples");
    if (info.description.empty())
      luaL_error(L, "script{}: description (one line) is required");
    static const std::regex version("[0-9]+(\\.[0-9]+)*([-+][0-9A-Za-z.]+)?");
    if (!info.version.empty() && !std::regex_match(info.version, version))
      luaL_error(L, "script{}: version '%s' is not like 1.2.0", info.version.c_str());

    lua_getfield(L, 1, "requires");
    if (!lua_isnil(L, -1)) {
      luaL_checktype(L, -1, LUA_TTABLE);
      int r = lua_gettop(L);
      only_fields(L, r, "script{} requires", {"api", "kernel", "features", "probes", "optional"});
      check_api(L, r, info);
      check_kernel(L, s, r, info);
      for (const auto &feature : strings(L, r, "features")) {
        info.requirements.push_back(feature);
        std::string missing = missing_feature(s, L, feature);
        if (!missing.empty())
          info.unmet.push_back(feature + ": " + missing);
      }
      check_probes(L, s, r, info);
      for (const auto &p : strings(L, r, "optional"))
        info.optional.push_back(p);
    }
    lua_pop(L, 1);

    bool help = s.args_ && s.args_->wants_help();
    if (!info.unmet.empty() && !help) {
      // One line per unmet requirement: the error's, then lines of their own.
      std::string place = where.file + ":" + std::to_string(where.line) + ": ";
      for (size_t i = 1; i < info.unmet.size(); i++)
        s.more_error_lines_.push_back(place + "needs " + info.unmet[i]);
      return luaL_error(L, "needs %s", info.unmet[0].c_str());
    }
    s.decl_.scripts.push_back(std::move(info));
    return 0;
  }

  // api = N: the script API this engine speaks must be N or later.
  static void check_api(lua_State *L, int r, ScriptInfo &info) {
    lua_getfield(L, r, "api");
    if (!lua_isnil(L, -1)) {
      lua_Integer api = luaL_checkinteger(L, -1);
      if (api < 1)
        luaL_error(L, "script{} requires: api is 1 or more");
      info.requirements.push_back("moontrace script API " + std::to_string(api));
      if (api > kScriptApi)
        info.unmet.push_back("moontrace's script API " + std::to_string(api) +
                             "; this moontrace has " + std::to_string(kScriptApi) +
                             " (a newer moontrace runs it)");
    }
    lua_pop(L, 1);
  }

  // kernel = "MAJOR.MINOR": the lowest kernel release the script runs on.
  static void check_kernel(lua_State *L, LuaScript &s, int r, ScriptInfo &info) {
    std::string lowest = optional_string(L, r, "kernel", "");
    if (lowest.empty())
      return;
    auto wanted = major_minor(lowest);
    if (wanted.first == 0)
      luaL_error(L, "script{} requires: kernel '%s' is not like \"5.10\"", lowest.c_str());
    info.requirements.push_back("Linux " + lowest + " or later");
    std::string release = s.kernel().release();
    if (major_minor(release) < wanted)
      info.unmet.push_back("Linux " + lowest + " or later; this kernel is " + release);
  }

  // probes = {...}: each probe, or one of each list of alternatives.
  static void check_probes(lua_State *L, LuaScript &s, int r, ScriptInfo &info) {
    lua_getfield(L, r, "probes");
    if (!lua_isnil(L, -1)) {
      luaL_checktype(L, -1, LUA_TTABLE);
      int t = lua_gettop(L);
      for (lua_Integer n = 1; lua_rawgeti(L, t, n) != LUA_TNIL; n++) {
        std::vector<std::string> names = probe_names(L, lua_gettop(L), "script{} requires probes");
        lua_pop(L, 1);
        std::string shown;
        for (const auto &name : names)
          shown += (shown.empty() ? "" : " or ") + name;
        info.requirements.push_back(shown);
        std::vector<std::string> reasons;
        auto chosen =
            raising_errors(L, [&] { return first_available(names, s.kernel(), true, reasons); });
        if (!chosen) {
          std::string why;
          for (size_t i = 0; i < reasons.size(); i++)
            why += (i ? "; " : "") + reasons[i];
          info.unmet.push_back(names.size() == 1 ? why : "one of " + shown + " (" + why + ")");
        }
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
};

void install_script_info(lua_State *L) {
  set_global_functions(L, {{"script", LuaScriptInfo::script}});
}

}  // namespace mt
