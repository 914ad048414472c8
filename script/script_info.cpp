// script{}: what a script says of itself (name, version, help, examples) and needs of the kernel.
#include <cstdio>
#include <regex>
#include <set>

#include "kernel/probe_name.h"
#include "kernel/probe_resolver.h"
#include "script/lua_api.h"
#include "script/lua_script.h"

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
  // A string field of the table at `t`, "" when absent; one line unless `lines`.
  static std::string text(lua_State *L, int t, const char *what, const char *field,
                          bool lines = false) {
    lua_getfield(L, t, field);
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s: %s is a string", what, field);
    std::string v = lua_isnil(L, -1) ? "" : lua_tostring(L, -1);
    lua_pop(L, 1);
    if (!lines && v.find('\n') != std::string::npos)
      luaL_error(L, "%s: %s is one line", what, field);
    return v;
  }

  // A list of strings at field `field` of the table at `t` (a single string is a list of one).
  static std::vector<std::string> strings(lua_State *L, int t, const char *what,
                                          const char *field) {
    std::vector<std::string> out;
    lua_getfield(L, t, field);
    if (lua_type(L, -1) == LUA_TSTRING) {
      out.push_back(lua_tostring(L, -1));
    } else if (lua_type(L, -1) == LUA_TTABLE) {
      for (lua_Integer n = 1; lua_rawgeti(L, -1, n) != LUA_TNIL; n++) {
        if (lua_type(L, -1) != LUA_TSTRING)
          luaL_error(L, "%s: %s is a list of strings", what, field);
        out.push_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    } else if (!lua_isnil(L, -1)) {
      luaL_error(L, "%s: %s is a list of strings", what, field);
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
      if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "%s: its fields are named (name = value)", what);
      if (!known.count(lua_tostring(L, -1)))
        luaL_error(L, "%s: unknown field '%s'", what, lua_tostring(L, -1));
    }
  }

  // What this kernel lacks of a "feature" a script names.
  static std::string missing_feature(LuaScript &s, lua_State *L, const std::string &feature) {
    return s.answers_.answer(
        KernelAnswers::question("feature", {feature}),
        [&]() -> KernelAnswers::Answer { return {feature_missing(s, L, feature)}; },
        [](const KernelAnswers::Answer &a) { return a.size() == 1; })[0];
  }
  static std::string feature_missing(LuaScript &s, lua_State *L, const std::string &feature) {
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
    if (!lua_istable(L, 1))
      luaL_error(L, "script{} takes a table: script{ description = \"...\", ... }");
    LuaScript &s = self(L);
    const char *what = "script{}";
    only_fields(L, 1, what, {"name", "version", "description", "help", "examples", "requires"});
    ScriptInfo info;
    ScriptLocation where = caller(L);
    info.path = where.file;
    for (const auto &earlier : s.decl_.scripts)
      if (earlier.path == info.path)
        luaL_error(L, "script{} is called once per script");
    info.name = text(L, 1, what, "name");
    info.version = text(L, 1, what, "version");
    info.description = text(L, 1, what, "description");
    info.help = text(L, 1, what, "help", true);
    info.examples = strings(L, 1, what, "examples");
    if (info.description.empty())
      luaL_error(L, "script{}: description (one line) is required");
    // (std::regex recurses per character: long text is refused first.)
    static const std::regex version("[0-9]+(\\.[0-9]+)*([-+][0-9A-Za-z.]+)?");
    if (!info.version.empty() &&
        (info.version.size() > 32 || !std::regex_match(info.version, version)))
      luaL_error(L, "script{}: version '%s' is not like 1.2.0", info.version.c_str());

    lua_getfield(L, 1, "requires");
    if (!lua_isnil(L, -1)) {
      const char *in_requires = "script{} requires";
      if (!lua_istable(L, -1))
        luaL_error(L, "%s: it is a table (api =, kernel =, probes = ...)", in_requires);
      int r = lua_gettop(L);
      only_fields(L, r, in_requires, {"api", "kernel", "features", "probes", "optional"});
      check_api(L, r, info);
      check_kernel(L, s, r, info);
      for (const auto &feature : strings(L, r, in_requires, "features")) {
        info.requirements.push_back(feature);
        std::string missing = missing_feature(s, L, feature);
        if (!missing.empty())
          info.unmet.push_back(feature + ": " + missing);
      }
      check_probes(L, s, r, info);
      info.optional = strings(L, r, in_requires, "optional");
      std::string malformed;  // each a name, not a list of alternatives
      for (const auto &name : info.optional)
        try {
          parse_probe_name(name);
        } catch (const Error &e) {
          malformed = e.what();
        }
      if (!malformed.empty())
        luaL_error(L, "%s optional: %s", in_requires, malformed.c_str());
    }
    lua_pop(L, 1);

    bool unmet = !info.unmet.empty();
    std::string first = unmet ? "needs " + info.unmet[0] : "";
    std::string place = where.file + ":" + std::to_string(where.line) + ": ";
    std::vector<std::string> more;
    for (size_t i = 1; i < info.unmet.size(); i++)
      more.push_back(place + "needs " + info.unmet[i]);
    s.decl_.scripts.push_back(std::move(info));
    if (unmet && s.help_) {
      // What follows may need what is missing: --help shows what it has.
      s.stopped_for_help_ = true;
      return luaL_error(L, "stopped for --help");
    }
    if (unmet) {
      // One line per unmet requirement: the error's, then lines of their own.
      s.more_error_lines_ = {": " + first, std::move(more)};
      return luaL_error(L, "%s", first.c_str());
    }
    return 0;
  }

  // api = N: the script API this engine speaks must be N or later.
  static void check_api(lua_State *L, int r, ScriptInfo &info) {
    lua_getfield(L, r, "api");
    if (!lua_isnil(L, -1)) {
      if (!lua_isinteger(L, -1))
        luaL_error(L, "script{} requires: api is a whole number");
      lua_Integer api = lua_tointeger(L, -1);
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
    std::string lowest = text(L, r, "script{} requires", "kernel");
    if (lowest.empty())
      return;
    static const std::regex release("[1-9][0-9]*\\.[0-9]+");
    if (lowest.size() > 16 || !std::regex_match(lowest, release))
      luaL_error(L, "script{} requires: kernel '%s' is not like \"5.10\"", lowest.c_str());
    info.requirements.push_back("Linux " + lowest + " or later");
    // Unknown for a kernel known by its BTF alone (check --btf): not checked.
    std::string running = s.kernel().release();
    if (!running.empty() && major_minor(running) < major_minor(lowest))
      info.unmet.push_back("Linux " + lowest + " or later; this kernel is " + running);
  }

  // probes = {...}: each probe, or one of each list of alternatives.
  static void check_probes(lua_State *L, LuaScript &s, int r, ScriptInfo &info) {
    lua_getfield(L, r, "probes");
    if (!lua_isnil(L, -1)) {
      if (!lua_istable(L, -1))
        luaL_error(L, "script{} requires: probes is a list of probe names");
      int t = lua_gettop(L);
      for (lua_Integer n = 1; lua_rawgeti(L, t, n) != LUA_TNIL; n++) {
        std::vector<std::string> names = probe_names(L, lua_gettop(L), "script{} requires probes");
        lua_pop(L, 1);
        std::string shown;
        for (const auto &name : names)
          shown += (shown.empty() ? "" : " or ") + name;
        info.requirements.push_back(shown);
        const KernelAnswers::Answer &chosen = probe_choice(L, names);
        if (chosen[0].empty())
          info.unmet.push_back(names.size() == 1 ? chosen[1]
                                                 : "one of " + shown + " (" + chosen[1] + ")");
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
