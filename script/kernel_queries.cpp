// available(), has_field(), arguments(), disk(), ncpus(): what a script may ask of this kernel.
#include <unistd.h>

#include <algorithm>
#include <regex>

#include "kernel/kernel_btf.h"
#include "kernel/probe_resolver.h"
#include "script/lua_api.h"

namespace mt {

struct LuaKernelQueries : LuaApi {
  // The first of `names` this kernel has; a name that does not parse is
  // raised as a Lua error.
  static std::optional<Alternative> first_available_or_raise(lua_State *L, LuaScript &s,
                                                             const std::vector<std::string> &names,
                                                             std::vector<std::string> &reasons) {
    return raising_errors(L, [&] { return first_available(names, s.kernel(), true, reasons); });
  }

  // available(NAME | {NAME, ALTERNATIVE...}) -> the first alternative this
  // kernel has (probe kind usable too), or nil and why none is.
  static int available(lua_State *L) {
    LuaScript &s = self(L);
    std::vector<std::string> names = probe_names(L, 1, "available");
    ScriptLocation where = caller(L);
    std::vector<std::string> reasons;
    std::optional<Alternative> chosen = first_available_or_raise(L, s, names, reasons);
    std::string why = joined(reasons);
    std::string note = where.file + ":" + std::to_string(where.line) + ": available: ";
    note += chosen ? names[chosen->index] : "none";
    s.notes_.push_back(note + (why.empty() ? "" : " (skipped " + why + ")"));
    if (!chosen) {
      lua_pushnil(L);
      lua_pushstring(L, why.c_str());
      return 2;
    }
    lua_pushstring(L, names[chosen->index].c_str());
    return 1;
  }

  // enum_value(ENUM, NAME) -> the value of NAME in this kernel's `enum
  // ENUM`, or nil when its BTF has none (a script then uses the uapi value).
  static int enum_value(lua_State *L) {
    LuaScript &s = self(L);
    std::string name = luaL_checkstring(L, 1), enumerator = luaL_checkstring(L, 2);
    const KernelBtf *btf = s.kernel().btf();
    std::optional<int64_t> value = btf ? btf->enum_value(name, enumerator) : std::nullopt;
    if (value)
      lua_pushinteger(L, *value);
    else
      lua_pushnil(L);
    return 1;
  }

  // has_field(TYPE, FIELD) -> whether this kernel's TYPE ("struct NAME" or
  // "union NAME") has a member FIELD, directly or in an anonymous member:
  // a script words its C for the kernel's version of a structure.
  static int has_field(lua_State *L) {
    LuaScript &s = self(L);
    std::string type = luaL_checkstring(L, 1), field = luaL_checkstring(L, 2);
    static const std::regex record("(struct|union) ([A-Za-z_][A-Za-z0-9_]*)");
    std::smatch m;
    if (!std::regex_match(type, m, record))
      return luaL_argerror(L, 1, "expected \"struct NAME\" or \"union NAME\"");
    const KernelBtf *btf = s.kernel().btf();
    bool has = btf && btf->has_member(m[1], m[2], field);
    ScriptLocation where = caller(L);
    s.notes_.push_back(where.file + ":" + std::to_string(where.line) + ": has_field: " + type +
                       " " + field + ": " + (has ? "yes" : "no"));
    lua_pushboolean(L, has);
    return 1;
  }

  // arguments(NAME | {NAME, ALTERNATIVE...}) -> the argument names of the
  // first alternative this kernel has, as `args.NAME` gives them (a
  // tracepoint's fields, a typed function's or tp_btf's parameters,
  // uprobes' arg0..arg5), or nil and why none is available: a script
  // words its expressions for the kernel's version of an event.
  static int arguments(lua_State *L) {
    LuaScript &s = self(L);
    std::vector<std::string> names = probe_names(L, 1, "arguments");
    std::vector<std::string> reasons;
    std::optional<Alternative> chosen = first_available_or_raise(L, s, names, reasons);
    if (!chosen || chosen->probes.empty()) {
      lua_pushnil(L);
      lua_pushstring(L, joined(reasons).c_str());
      return 2;
    }
    const ResolvedProbe &rp = chosen->probes[0];
    std::vector<std::string> args;
    if (rp.format)
      for (const auto &f : rp.format->fields)
        args.push_back(f.name);
    else if (rp.has_signature)
      for (const auto &p : rp.signature.params)
        args.push_back(p.name);
    else if (probe_kind(rp.name.kind).user_memory)
      for (int i = 0; i < 6; i++)
        args.push_back("arg" + std::to_string(i));
    lua_createtable(L, (int)args.size(), 0);
    for (size_t i = 0; i < args.size(); i++) {
      lua_pushstring(L, args[i].c_str());
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
  }

  // disk(NAME) -> {name=, major=, minor=, dev=} of a block device, dev as
  // the block tracepoints give it ((major << 20) | minor); nil and why if
  // there is none.
  static int disk(lua_State *L) {
    std::string name = luaL_checkstring(L, 1);
    if (name.rfind("/dev/", 0) == 0)
      name = name.substr(5);
    std::string numbers = self(L).kernel().block_device(name);
    unsigned major = 0, minor = 0;
    if (std::sscanf(numbers.c_str(), "%u:%u", &major, &minor) != 2) {
      lua_pushnil(L);
      lua_pushfstring(L, "no such disk '%s'", name.c_str());
      return 2;
    }
    lua_createtable(L, 0, 4);
    lua_pushstring(L, name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, major);
    lua_setfield(L, -2, "major");
    lua_pushinteger(L, minor);
    lua_setfield(L, -2, "minor");
    lua_pushinteger(L, (lua_Integer(major) << 20) | minor);
    lua_setfield(L, -2, "dev");
    return 1;
  }

  // ncpus() -> the number of CPUs online, as bpftrace's ncpus.
  static int ncpus(lua_State *L) {
    lua_pushinteger(L, std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    return 1;
  }
};

void install_kernel_queries(lua_State *L) {
  set_global_functions(L, {{"available", LuaKernelQueries::available},
                           {"has_field", LuaKernelQueries::has_field},
                           {"enum_value", LuaKernelQueries::enum_value},
                           {"arguments", LuaKernelQueries::arguments},
                           {"disk", LuaKernelQueries::disk},
                           {"ncpus", LuaKernelQueries::ncpus}});
}

}  // namespace mt
