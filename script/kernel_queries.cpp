// available(), has_field(), arguments(), disk(), ncpus(): what a script may ask of this kernel.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <regex>

#include "kernel/kernel_btf.h"
#include "kernel/probe_resolver.h"
#include "script/lua_api.h"

namespace mt {

const KernelAnswers::Answer &LuaApi::probe_choice(lua_State *L,
                                                  const std::vector<std::string> &names) {
  LuaScript &s = self(L);
  auto shaped = [&](const KernelAnswers::Answer &a) {
    int64_t i;
    return a.size() >= 3 && (a[0].empty() || (KernelAnswers::integer(a[0], i) && i >= 0 &&
                                              static_cast<size_t>(i) < names.size()));
  };
  return s.answers_.answer(
      KernelAnswers::question("probe", names),
      [&] {
        std::vector<std::string> reasons;
        auto chosen =
            raising_errors(L, [&] { return first_available(names, s.kernel(), true, reasons); });
        KernelAnswers::Answer answer{chosen ? std::to_string(chosen->index) : "", joined(reasons),
                                     chosen && !chosen->probes.empty() ? "1" : ""};
        if (answer[2].empty())
          return answer;
        const ResolvedProbe &rp = chosen->probes[0];
        if (rp.format)
          for (const auto &f : rp.format->fields)
            answer.push_back(f.name);
        else if (rp.has_signature)
          for (const auto &p : rp.signature.params)
            answer.push_back(p.name);
        else if (probe_kind(rp.name.kind).source == TargetSource::UsdtNotes)
          for (size_t i = 0; i < rp.usdt_argument_types.size(); i++)
            answer.push_back("arg" + std::to_string(i));
        else if (probe_kind(rp.name.kind).user_memory)
          for (int i = 0; i < 6; i++)
            answer.push_back("arg" + std::to_string(i));
        return answer;
      },
      shaped, !any_names_a_file(names));
}

struct LuaKernelQueries : LuaApi {
  // available(NAME | {NAME, ALTERNATIVE...}) -> the first alternative this
  // kernel has (probe kind usable too), or nil and why none is.
  static int available(lua_State *L) {
    LuaScript &s = self(L);
    std::vector<std::string> names = probe_names(L, 1, "available");
    ScriptLocation where = caller(L);
    const KernelAnswers::Answer &chosen = probe_choice(L, names);
    const std::string &why = chosen[1];
    std::string name = chosen[0].empty() ? "" : names[std::stoul(chosen[0])];
    std::string note = where.file + ":" + std::to_string(where.line) + ": available: ";
    note += chosen[0].empty() ? "none" : name;
    s.notes_.push_back(note + (why.empty() ? "" : " (skipped " + why + ")"));
    if (chosen[0].empty()) {
      lua_pushnil(L);
      lua_pushstring(L, why.c_str());
      return 2;
    }
    lua_pushstring(L, name.c_str());
    return 1;
  }

  // enum_value(ENUM, NAME) -> the value of NAME in this kernel's `enum
  // ENUM`, or nil when its BTF has none (a script then uses the uapi value).
  static int enum_value(lua_State *L) {
    LuaScript &s = self(L);
    std::string name = luaL_checkstring(L, 1), enumerator = luaL_checkstring(L, 2);
    const KernelAnswers::Answer &value = s.answers_.answer(
        KernelAnswers::question("enum", {name, enumerator}),
        [&]() -> KernelAnswers::Answer {
          const KernelBtf *btf = s.kernel().btf();
          std::optional<int64_t> v = btf ? btf->enum_value(name, enumerator) : std::nullopt;
          return {v ? std::to_string(*v) : ""};
        },
        [](const KernelAnswers::Answer &a) {
          int64_t n;
          return a.size() == 1 && (a[0].empty() || KernelAnswers::integer(a[0], n));
        });
    int64_t n = 0;
    if (KernelAnswers::integer(value[0], n))
      lua_pushinteger(L, n);
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
    bool has = s.answers_.answer(
                   KernelAnswers::question("field", {type, field}),
                   [&]() -> KernelAnswers::Answer {
                     const KernelBtf *btf = s.kernel().btf();
                     return {btf && btf->has_member(m[1], m[2], field) ? "1" : ""};
                   },
                   [](const KernelAnswers::Answer &a) { return a.size() == 1; })[0] == "1";
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
    std::vector<std::string> names = probe_names(L, 1, "arguments");
    const KernelAnswers::Answer &chosen = probe_choice(L, names);
    if (chosen[2].empty()) {
      lua_pushnil(L);
      lua_pushstring(L, chosen[1].c_str());
      return 2;
    }
    lua_createtable(L, (int)chosen.size() - 3, 0);
    for (size_t i = 3; i < chosen.size(); i++) {
      lua_pushstring(L, chosen[i].c_str());
      lua_rawseti(L, -2, (lua_Integer)i - 2);
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
