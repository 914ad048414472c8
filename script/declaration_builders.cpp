// probe(), map{}, count{}..., latency{}, param{}, fxt{}: what builds the Declaration.
// Over 500 lines: every declaring function reads its own table spec; they share the readers here.
#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "bpf_headers/mt_abi.h"
#include "codegen/c_generator.h"
#include "common/c_tokens.h"
#include "script/lua_api.h"
#include "script/script_params.h"

namespace mt {

namespace {

// Names generated C gives its own meaning; a map may not take them.
bool reserved_name(const std::string &name) {
  static const std::set<std::string> names = {
      "args",    "retval",  "param",   "latency", "start",   "map_get", "map_set",
      "map_add", "map_del", "map_has", "map_ptr", "map_key", "int",     "char",
      "long",    "short",   "void",    "return",  "if",      "else",    "for",
      "while",   "struct",  "union",   "const",   "static",  "sizeof"};
  return names.count(name) || name.rfind("mt_", 0) == 0 || name.rfind("__", 0) == 0 ||
         name.rfind("bpf_", 0) == 0 ||
         std::count(builtin_names().begin(), builtin_names().end(), name);
}

// An optional positive integer field of the table at `t`.
uint32_t optional_size(lua_State *L, int t, const char *field, uint32_t fallback) {
  lua_getfield(L, t, field);
  lua_Integer n = lua_isnil(L, -1) ? fallback : luaL_checkinteger(L, -1);
  lua_pop(L, 1);
  if (n <= 0 || n > (1 << 24))
    luaL_error(L, "'%s' must be 1..16777216", field);
  return static_cast<uint32_t>(n);
}

bool optional_bool(lua_State *L, int t, const char *field, bool fallback) {
  lua_getfield(L, t, field);
  bool v = lua_isnil(L, -1) ? fallback : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\n");
  size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "str(expr)" or "str(expr, 32)": a string read through a pointer; ustr()
// and kstr() say from which memory.
bool parse_string_capture(const std::string &text, std::string &inner, int &size,
                          StringMemory &memory) {
  std::string t = trim(text);
  size_t open = t.find('(');
  std::string call = t.substr(0, open);
  if (open == std::string::npos || t.back() != ')' ||
      (call != "str" && call != "ustr" && call != "kstr"))
    return false;
  memory = call == "ustr"   ? StringMemory::User
           : call == "kstr" ? StringMemory::Kernel
                            : StringMemory::Guess;
  inner = t.substr(open + 1, t.size() - open - 2);
  int depth = 0;
  for (size_t i = inner.size(); i-- > 0;) {
    char c = inner[i];
    depth += c == ')' || c == ']';
    depth -= c == '(' || c == '[';
    if (c == ',' && depth == 0) {
      size = std::atoi(inner.c_str() + i + 1);
      inner = inner.substr(0, i);
      break;
    }
  }
  inner = trim(inner);
  return true;
}

// "kstack", "ustack", "kstack(8)": a stack of the current task, kernel or
// user, to a depth (frames kept). nullopt: not a stack.
std::optional<std::pair<StackKind, int>> parse_stack_capture(const std::string &text) {
  std::string t = trim(text);
  std::string call = t.substr(0, 6);
  if (call != "kstack" && call != "ustack")
    return std::nullopt;
  StackKind kind = call == "kstack" ? StackKind::Kernel : StackKind::User;
  std::string rest = trim(t.substr(6));
  if (rest.empty())
    return std::make_pair(kind, MT_STACK_DEFAULT_DEPTH);
  if (rest.front() != '(' || rest.back() != ')')
    return std::nullopt;
  std::string depth = trim(rest.substr(1, rest.size() - 2));
  if (depth.empty() || depth.size() > 4 ||
      depth.find_first_not_of("0123456789") != std::string::npos)
    return std::make_pair(kind, 0);  // refused by the caller, naming the range
  return std::make_pair(kind, std::atoi(depth.c_str()));
}

}  // namespace

struct LuaDeclarationBuilders : LuaApi {
  static void add_capture(lua_State *L, std::vector<Capture> &captures, const std::string &name,
                          const std::string &text, const ScriptLocation &where) {
    if (!is_c_identifier(name) || name.rfind("__", 0) == 0)
      luaL_error(L, "capture name '%s' is not a C identifier", name.c_str());
    for (const auto &c : captures)
      if (c.name == name)
        luaL_error(L, "capture '%s' is declared twice", name.c_str());
    Capture c;
    c.name = name;
    std::string inner;
    if (auto stack = parse_stack_capture(text)) {
      std::tie(c.stack, c.stack_depth) = *stack;
      if (c.stack_depth < 1 || c.stack_depth > MT_STACK_MAX_DEPTH)
        luaL_error(L, "capture '%s': a stack's depth must be 1..%d", name.c_str(),
                   MT_STACK_MAX_DEPTH);
      c.expr = expression(L, trim(text), where);
    } else if (trim(text) == "cgroup_path") {
      c.c_type = MT_NAME(MT_CGROUP_PATH_TYPE);
      c.expr = expression(L, "bpf_get_current_cgroup_id()", where);
    } else if (parse_string_capture(text, inner, c.string_size, c.string_memory)) {
      c.is_string = true;
      if (c.string_size <= 0 || c.string_size > 4096)
        luaL_error(L, "capture '%s': string size must be 1..4096", name.c_str());
      c.expr = expression(L, inner, where);
    } else {
      c.expr = expression(L, text, where);
    }
    captures.push_back(std::move(c));
  }

  // A capture-style tuple at index `t`: "expr", or {"comm", "args.x",
  // name = "C expression", s = "str(ptr)"}. Array entries come first,
  // then named ones sorted (deterministic C, stable cache keys).
  static std::vector<Capture> capture_list(lua_State *L, int t, const ScriptLocation &where,
                                           const char *what) {
    std::vector<Capture> captures;
    t = lua_absindex(L, t);
    auto unnamed = [&](const std::string &text) {
      std::string name = text.rfind("args.", 0) == 0 ? text.substr(5) : text;
      if (parse_stack_capture(text))
        name = trim(text).substr(0, 6);  // kstack(8) is named kstack
      add_capture(L, captures, name, text, where);
    };
    if (lua_type(L, t) == LUA_TSTRING) {
      unnamed(lua_tostring(L, t));
      return captures;
    }
    if (!lua_istable(L, t))
      luaL_error(L, "'%s' must be a table of name = \"C expression\"", what);
    for (lua_Integer i = 1; lua_rawgeti(L, t, i) == LUA_TSTRING; i++) {
      unnamed(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    std::vector<std::pair<std::string, std::string>> named;
    for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1)) {
      if (lua_type(L, -2) != LUA_TSTRING)
        continue;
      if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "'%s' entry '%s' must be a C expression in a string", what,
                   lua_tostring(L, -2));
      named.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
    }
    std::sort(named.begin(), named.end());
    for (const auto &[name, text] : named)
      add_capture(L, captures, name, text, where);
    return captures;
  }

  // An optional string field of the table at `t` as a C expression.
  static Expression optional_expression(lua_State *L, int t, const char *field,
                                        const ScriptLocation &where) {
    Expression e;
    lua_getfield(L, t, field);
    if (lua_isstring(L, -1))
      e = expression(L, lua_tostring(L, -1), where);
    else if (!lua_isnil(L, -1))
      luaL_error(L, "'%s' must be C code in a string", field);
    lua_pop(L, 1);
    return e;
  }

  // Aggregation objects at index `i`: one, or a list of them.
  static std::vector<int> aggregation_ids(lua_State *L, int i) {
    std::vector<int> ids;
    i = lua_absindex(L, i);
    if (lua_isnil(L, i))
      return ids;
    if (auto *id = static_cast<int *>(luaL_testudata(L, i, kAggregationType))) {
      ids.push_back(*id);
      return ids;
    }
    if (!lua_istable(L, i))
      luaL_error(L, "'aggregate' must be an aggregation (count{}, hist{}, ...) or a list of them");
    for (lua_Integer n = 1; lua_rawgeti(L, i, n) != LUA_TNIL; n++) {
      auto *id = static_cast<int *>(luaL_testudata(L, -1, kAggregationType));
      if (!id)
        luaL_error(L, "'aggregate' entry %d is not an aggregation", (int)n);
      ids.push_back(*id);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return ids;
  }

  // A capture only drawing uses; its name starts with __ so handlers and
  // text output never see it.
  static std::string hidden_capture(lua_State *L, ProbeDecl &p, const std::string &name,
                                    const std::string &text, const std::string &c_type = "") {
    Capture c;
    c.name = name;
    c.expr = expression(L, text, p.where);
    c.c_type = c_type;
    p.captures.push_back(std::move(c));
    return name;
  }

  // A value that names a track: a number, or a string (str(...)).
  static std::string hidden_label(lua_State *L, ProbeDecl &p, const std::string &name,
                                  const std::string &text) {
    Capture c;
    c.name = name;
    std::string inner;
    c.is_string = parse_string_capture(text, inner, c.string_size, c.string_memory);
    if (c.is_string && (c.string_size <= 0 || c.string_size > 4096))
      luaL_error(L, "draw track label: string size must be 1..4096");
    c.expr = expression(L, c.is_string ? inner : text, p.where);
    p.captures.push_back(std::move(c));
    return name;
  }

  // draw = {kind=, name=, category=, args={...}, duration=, track={id=, name=},
  //         flow={id=, point=}, when=} on the probe being declared.
  static void add_draw(lua_State *L, ProbeDecl &p, int t) {
    DrawDecl d;
    std::string tag = "__d" + std::to_string(p.draws.size()) + "_";
    static const std::pair<const char *, DrawDecl::Kind> kinds[] = {
        {"instant", DrawDecl::Kind::Instant},
        {"slice", DrawDecl::Kind::Slice},
        {"begin", DrawDecl::Kind::Begin},
        {"end", DrawDecl::Kind::End},
        {"counter", DrawDecl::Kind::Counter}};
    std::string kind = optional_string(L, t, "kind", "instant");
    auto found = std::find_if(std::begin(kinds), std::end(kinds),
                              [&](const auto &k) { return kind == k.first; });
    if (found == std::end(kinds))
      luaL_error(L, "draw kind must be instant, slice, begin, end or counter");
    d.kind = found->second;
    d.name = optional_string(L, t, "name", "");
    if (d.name.empty())
      luaL_error(L, "draw needs a name");
    d.category = optional_string(L, t, "category", d.category);
    lua_getfield(L, t, "args");
    if (!lua_isnil(L, -1))
      for (auto &c : capture_list(L, -1, p.where, "args")) {
        // Counter series are numbers: typed so, they may name the action's locals.
        if (d.kind == DrawDecl::Kind::Counter)
          c.c_type = "__s64";
        auto same = std::find_if(p.captures.begin(), p.captures.end(),
                                 [&](const Capture &o) { return o.name == c.name; });
        if (same == p.captures.end())
          p.captures.push_back(c);
        else if (same->expr.text != c.expr.text)
          luaL_error(L, "draw argument '%s' differs from the capture of that name", c.name.c_str());
        d.args.push_back(c.name);
      }
    lua_pop(L, 1);
    if (d.args.size() > 15)
      luaL_error(L, "draw '%s' has %d arguments; a trace event holds at most 15", d.name.c_str(),
                 (int)d.args.size());
    lua_getfield(L, t, "names");
    if (lua_istable(L, -1))
      d.value_names = value_names(L, lua_gettop(L), d);
    else if (!lua_isnil(L, -1))
      luaL_error(L, "draw '%s': names must be a table {ARG = {[0] = \"name\", ...}}",
                 d.name.c_str());
    lua_pop(L, 1);
    lua_getfield(L, t, "when");
    if (lua_type(L, -1) == LUA_TSTRING) {
      d.when = hidden_capture(L, p, tag + "when", lua_tostring(L, -1), "__u8");
      Expression &e = p.captures.back().expr;
      e.text = "!!(" + e.text + ")";
    } else if (!lua_isnil(L, -1))
      luaL_error(L, "draw '%s': when must be a C expression", d.name.c_str());
    lua_pop(L, 1);
    lua_getfield(L, t, "duration");
    if (lua_isstring(L, -1))
      d.duration = hidden_capture(L, p, tag + "duration", lua_tostring(L, -1));
    lua_getfield(L, t, "track");
    if (lua_type(L, -1) == LUA_TSTRING) {
      // "thread" (the default), "process" (one track for the whole process)
      // or "async" (lanes of an async track, where slices may overlap).
      std::string track = lua_tostring(L, -1);
      if (track == "process") {
        d.track = hidden_capture(L, p, tag + "track", "pid");
        d.process_track = true;
      } else if (track == "async") {
        if (d.kind != DrawDecl::Kind::Slice)
          luaL_error(L, "draw '%s': track \"async\" is for slices", d.name.c_str());
        d.async_track = true;
      } else if (track != "thread") {
        luaL_error(L, "draw track must be \"thread\", \"process\", \"async\" or {id=, name=}");
      }
    } else if (lua_istable(L, -1)) {
      // {id = "C", name = "ring"}: a track per value, "ring 0x..." under
      // the event's process; label = "C" (a number or str()) names it by
      // that value; group = "disks" puts it under a process of that name.
      int track = lua_gettop(L);
      lua_getfield(L, track, "label");
      if (lua_isstring(L, -1))
        d.track_label = hidden_label(L, p, tag + "label", lua_tostring(L, -1));
      lua_getfield(L, track, "id");
      if (lua_isstring(L, -1))
        d.track = hidden_capture(L, p, tag + "track", lua_tostring(L, -1));
      else if (d.track_label.empty())
        luaL_error(L, "draw track needs id = \"C expression\" or label = \"C expression\"");
      lua_pop(L, 2);
      d.track_name = optional_string(L, track, "name", d.track_label.empty() ? "track" : "");
      d.track_group = optional_string(L, track, "group", "");
    }
    lua_getfield(L, t, "flow");
    if (lua_istable(L, -1)) {
      int f = lua_gettop(L);
      lua_getfield(L, f, "id");
      if (!lua_isstring(L, -1))
        luaL_error(L, "draw flow needs id = \"C expression\"");
      d.flow = hidden_capture(L, p, tag + "flow", lua_tostring(L, -1));
      lua_pop(L, 1);
      std::string point = optional_string(L, f, "point", "step");
      if (point != "begin" && point != "step" && point != "end")
        luaL_error(L, "draw flow point must be begin, step or end");
      d.flow_point = point == "begin" ? DrawDecl::Flow::Begin
                     : point == "end" ? DrawDecl::Flow::End
                                      : DrawDecl::Flow::Step;
    }
    lua_pop(L, 3);
    if (!d.flow.empty() && d.kind == DrawDecl::Kind::Counter)
      luaL_error(L, "draw '%s': a counter holds no flow point (flows bind to slices)",
                 d.name.c_str());
    p.draws.push_back(std::move(d));
  }

  // names = {ARG = {[0] = "NOP", "READV", ...}}: each named argument of the
  // drawing shown as the name of its value.
  static std::map<std::string, std::vector<std::string>> value_names(lua_State *L, int t,
                                                                     const DrawDecl &d) {
    std::map<std::string, std::vector<std::string>> all;
    lua_pushnil(L);
    while (lua_next(L, t)) {
      const char *arg = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : nullptr;
      if (!arg || std::find(d.args.begin(), d.args.end(), arg) == d.args.end())
        luaL_error(L, "draw '%s': names are for its arguments, by name", d.name.c_str());
      if (!lua_istable(L, -1))
        luaL_error(L, "draw '%s': names of '%s' must be a table {[0] = \"name\", ...}",
                   d.name.c_str(), arg);
      std::vector<std::string> &names = all[arg];
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 0 || lua_tointeger(L, -2) > 65535 ||
            lua_type(L, -1) != LUA_TSTRING)
          luaL_error(L, "draw '%s': names of '%s' must map values 0..65535 to strings",
                     d.name.c_str(), arg);
        auto value = static_cast<size_t>(lua_tointeger(L, -2));
        if (names.size() <= value)
          names.resize(value + 1);
        names[value] = lua_tostring(L, -1);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    return all;
  }

  // draw = one drawing, or a list of them (at `t`, or nil).
  static void add_draws(lua_State *L, ProbeDecl &p, int t) {
    if (lua_isnil(L, t))
      return;
    if (!lua_istable(L, t))
      luaL_error(L, "'draw' must be a table: {kind=, name=, args=, flow=, track=}");
    lua_rawgeti(L, t, 1);
    bool list = lua_istable(L, -1);
    lua_pop(L, 1);
    if (!list) {
      add_draw(L, p, t);
      return;
    }
    for (lua_Integer i = 1; lua_rawgeti(L, t, i) == LUA_TTABLE; i++) {
      add_draw(L, p, lua_gettop(L));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }

  // fxt{file = "x.fxt"}: draw into this trace file (-o overrides it). Of
  // scripts run together, the first to declare one names it.
  static int fxt(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!self(L).decl_.trace_file.empty())
      return 0;
    self(L).decl_.trace_file = optional_string(L, 1, "file", "trace.fxt");
    self(L).decl_.trace_file_where = caller(L);
    return 0;
  }

  static void set_handler(lua_State *L, LuaScript &s, ProbeDecl &p, int index) {
    lua_pushvalue(L, index);
    s.handlers_[p.id] = luaL_ref(L, LUA_REGISTRYINDEX);
    p.has_handler = true;
  }

  // probe(NAME | {NAME, ALTERNATIVE...}, [SPEC], [HANDLER])
  static int probe(lua_State *L) {
    only_while_declaring(L, "probe()");
    LuaScript &s = self(L);
    ProbeDecl p;
    p.id = static_cast<int>(s.decl_.probes.size());
    p.where = caller(L);
    p.alternatives = probe_names(L, 1, "probe");
    int handler = 0;
    if (lua_type(L, 2) == LUA_TFUNCTION)
      handler = 2;
    else if (lua_type(L, 3) == LUA_TFUNCTION)
      handler = 3;
    if (lua_type(L, 2) == LUA_TTABLE) {
      p.guard = optional_expression(L, 2, "guard", p.where);
      p.predicate = optional_expression(L, 2, "filter", p.where);
      p.action = optional_expression(L, 2, "action", p.where);
      lua_getfield(L, 2, "capture");
      if (!lua_isnil(L, -1))
        p.captures = capture_list(L, -1, p.where, "capture");
      lua_getfield(L, 2, "aggregate");
      p.aggregations = aggregation_ids(L, -1);
      lua_getfield(L, 2, "draw");
      add_draws(L, p, lua_gettop(L));
      lua_pop(L, 3);
    } else if (!lua_isnoneornil(L, 2) && handler != 2) {
      return luaL_argerror(L, 2, "expected a table (filter, capture) or a handler function");
    }
    if (handler)
      set_handler(L, s, p, handler);
    s.decl_.probes.push_back(std::move(p));
    return 0;
  }

  // map{name=, type="hash", key="u32" | {field="type", ...}, value="u64",
  //     size=10240, print=false} -> map object
  static int map(lua_State *L) {
    only_while_declaring(L, "map{}");
    LuaScript &s = self(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    MapDecl m;
    m.where = caller(L);
    m.name = optional_string(L, 1, "name", "");
    if (!is_c_identifier(m.name) || reserved_name(m.name))
      return luaL_error(L, "map name '%s' must be a C identifier that is not a builtin",
                        m.name.c_str());
    for (const auto &other : s.decl_.maps)
      if (other.name == m.name)
        return luaL_error(L, "map '%s' is declared twice", m.name.c_str());
    static const std::pair<const char *, MapKind> kinds[] = {
        {"hash", MapKind::Hash},
        {"percpu_hash", MapKind::PercpuHash},
        {"lru_hash", MapKind::LruHash},
        {"array", MapKind::Array},
        {"percpu_array", MapKind::PercpuArray}};
    std::string kind = optional_string(L, 1, "type", "hash");
    auto found = std::find_if(std::begin(kinds), std::end(kinds),
                              [&](const auto &k) { return kind == k.first; });
    if (found == std::end(kinds))
      return luaL_error(L,
                        "map '%s': type must be hash, percpu_hash, lru_hash, array or "
                        "percpu_array",
                        m.name.c_str());
    m.kind = found->second;
    bool array = m.kind == MapKind::Array || m.kind == MapKind::PercpuArray;
    m.key_type = type_or_fields(L, m, "key", "u32", m.key_fields);
    if (array &&
        (!m.key_fields.empty() || (m.key_type.text != "u32" && m.key_type.text != "__u32")))
      return luaL_error(L, "map '%s': array maps are keyed by u32", m.name.c_str());
    m.value_type = type_or_fields(L, m, "value", "u64", m.value_fields);
    m.size = optional_size(L, 1, "size", 10240);
    m.print_at_exit = optional_bool(L, 1, "print", false);
    s.decl_.maps.push_back(std::move(m));
    return new_handle(L, static_cast<int>(s.decl_.maps.size() - 1), kMapType);
  }

  // A map's key or value (field `what` of the table at 1): a C type, or a
  // table of fields, name = "C type", kept in name order.
  static Expression type_or_fields(lua_State *L, const MapDecl &m, const char *what,
                                   const char *fallback,
                                   std::vector<std::pair<std::string, std::string>> &fields) {
    Expression type;
    lua_getfield(L, 1, what);
    if (lua_istable(L, -1)) {
      for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
          luaL_error(L, "map '%s': %s fields are name = \"C type\"", m.name.c_str(), what);
        fields.emplace_back(lua_tostring(L, -2), lua_tostring(L, -1));
      }
      std::sort(fields.begin(), fields.end());
      if (fields.empty())
        luaL_error(L, "map '%s': a %s table needs fields, name = \"C type\"", m.name.c_str(), what);
    } else {
      type = expression(L, lua_isnil(L, -1) ? fallback : luaL_checkstring(L, -1), m.where);
    }
    lua_pop(L, 1);
    return type;
  }

  // count{}, sum{value=}, min{}, max{}, avg{}, stats{}, hist{}, lhist{min=,
  // max=, step=}; each takes name=, by=, unit=, size=, print=.
  static int aggregation(lua_State *L) {
    if (self(L).declared_) {
      auto kind = static_cast<AggKind>(lua_tointeger(L, lua_upvalueindex(1)));
      lua_pushfstring(L, "%s{}", agg_kind_name(kind));
      only_while_declaring(L, lua_tostring(L, -1));
    }
    LuaScript &s = self(L);
    AggregationDecl a;
    a.id = static_cast<int>(s.decl_.aggregations.size());
    a.kind = static_cast<AggKind>(lua_tointeger(L, lua_upvalueindex(1)));
    a.where = caller(L);
    if (lua_isnoneornil(L, 1))
      lua_newtable(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    std::string kind = agg_kind_name(a.kind);
    int same_kind = 0;
    for (const auto &other : s.decl_.aggregations)
      same_kind += other.kind == a.kind;
    auto taken = [&](const std::string &name) {
      return std::any_of(s.decl_.aggregations.begin(), s.decl_.aggregations.end(),
                         [&](const AggregationDecl &o) { return o.name == name; });
    };
    std::string fallback = kind;
    for (int n = same_kind + 1; taken(fallback); n++)
      fallback = kind + std::to_string(n);
    a.name = optional_string(L, 1, "name", fallback);
    for (const auto &other : s.decl_.aggregations)
      if (other.name == a.name)
        return luaL_error(L, "aggregation '%s' is declared twice", a.name.c_str());
    lua_getfield(L, 1, "by");
    if (!lua_isnil(L, -1))
      a.keys = capture_list(L, -1, a.where, "by");
    lua_pop(L, 1);
    for (const auto &k : a.keys)
      if (k.name == "value" || k.name == "count" || k.name == "sum" || k.name == "min" ||
          k.name == "max" || k.name == "avg" || k.name == "buckets")
        return luaL_error(L,
                          "%s '%s': key '%s' would hide a value of the same name; name it "
                          "otherwise",
                          kind.c_str(), a.name.c_str(), k.name.c_str());
    a.value = optional_expression(L, 1, "value", a.where);
    if (a.kind == AggKind::Count && !a.value.text.empty())
      return luaL_error(L, "count '%s' takes no value (did you mean sum?)", a.name.c_str());
    a.unit = optional_string(L, 1, "unit", "");
    a.size = optional_size(L, 1, "size", 10240);
    a.print_at_exit = optional_bool(L, 1, "print", true);
    if (a.kind == AggKind::LinearHist) {
      auto integer = [&](const char *field) {
        lua_getfield(L, 1, field);
        if (!lua_isinteger(L, -1))
          luaL_error(L, "lhist '%s' needs an integer %s", a.name.c_str(), field);
        lua_Integer v = lua_tointeger(L, -1);
        lua_pop(L, 1);
        return static_cast<int64_t>(v);
      };
      a.lmin = integer("min");
      a.lmax = integer("max");
      a.lstep = integer("step");
      if (a.lstep <= 0 || a.lmax <= a.lmin || (a.lmax - a.lmin) / a.lstep > 1000)
        return luaL_error(L, "lhist '%s': need min < max and 0 < step, at most 1000 steps",
                          a.name.c_str());
    }
    s.decl_.aggregations.push_back(std::move(a));
    return new_handle(L, static_cast<int>(s.decl_.aggregations.size() - 1), kAggregationType);
  }

  // latency({name=, start=, stop=, key=, stop_key=, carry=, guard=, stop_guard=,
  //          filter=, stop_filter=,
  //          start_action=, stop_action=, start_draw=, into=, capture=, draw=,
  //          size=}, [HANDLER]): two probes and a map between them; `carry`
  //          values taken at start (after start_action) are start.NAME at stop.
  static int latency(lua_State *L) {
    only_while_declaring(L, "latency{}");
    LuaScript &s = self(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    LatencyDecl lat;
    lat.id = static_cast<int>(s.decl_.latencies.size());
    lat.where = caller(L);
    lat.name = optional_string(L, 1, "name", "latency" + std::to_string(lat.id + 1));
    ProbeDecl start, stop;
    start.where = stop.where = lat.where;
    lua_getfield(L, 1, "start");
    start.alternatives = probe_names(L, -1, "latency 'start'");
    lua_getfield(L, 1, "stop");
    stop.alternatives = probe_names(L, -1, "latency 'stop'");
    lua_getfield(L, 1, "key");
    if (lua_isnil(L, -1))
      return luaL_error(L, "latency '%s' needs key = \"C expression\" (e.g. \"tid\")",
                        lat.name.c_str());
    lat.key = capture_list(L, -1, lat.where, "key");
    lua_getfield(L, 1, "stop_key");
    if (!lua_isnil(L, -1)) {
      lat.stop_key = capture_list(L, -1, lat.where, "stop_key");
      bool same = lat.stop_key.size() == lat.key.size();
      for (size_t i = 0; same && i < lat.key.size(); i++)
        same = lat.stop_key[i].name == lat.key[i].name;
      if (!same)
        return luaL_error(L, "latency '%s': stop_key must name the same fields as key",
                          lat.name.c_str());
    }
    lua_pop(L, 1);
    lua_getfield(L, 1, "carry");
    if (!lua_isnil(L, -1))
      lat.carry = capture_list(L, -1, lat.where, "carry");
    lua_pop(L, 1);
    lua_getfield(L, 1, "into");
    stop.aggregations = aggregation_ids(L, -1);
    lua_getfield(L, 1, "capture");
    if (!lua_isnil(L, -1))
      stop.captures = capture_list(L, -1, lat.where, "capture");
    lua_pop(L, 5);
    lua_getfield(L, 1, "draw");
    add_draws(L, stop, lua_gettop(L));
    lua_getfield(L, 1, "start_draw");
    add_draws(L, start, lua_gettop(L));
    lua_pop(L, 2);
    start.guard = optional_expression(L, 1, "guard", lat.where);
    stop.guard = optional_expression(L, 1, "stop_guard", lat.where);
    start.predicate = optional_expression(L, 1, "filter", lat.where);
    stop.predicate = optional_expression(L, 1, "stop_filter", lat.where);
    start.action = optional_expression(L, 1, "start_action", lat.where);
    stop.action = optional_expression(L, 1, "stop_action", lat.where);
    lat.size = optional_size(L, 1, "size", 10240);
    start.id = static_cast<int>(s.decl_.probes.size());
    stop.id = start.id + 1;
    start.latency_start = stop.latency_stop = lat.id;
    lat.start_probe = start.id;
    lat.stop_probe = stop.id;
    if (lua_type(L, 2) == LUA_TFUNCTION)
      set_handler(L, s, stop, 2);
    if (stop.aggregations.empty() && stop.captures.empty() && !stop.has_handler)
      return luaL_error(L,
                        "latency '%s' goes nowhere: give into = hist{...}, capture = {...}, "
                        "draw = {...} or a handler",
                        lat.name.c_str());
    s.decl_.probes.push_back(std::move(start));
    s.decl_.probes.push_back(std::move(stop));
    s.decl_.latencies.push_back(std::move(lat));
    return 0;
  }

  // param(NAME, {type=, default=, help=, short=}) -> value
  static int param(lua_State *L) {
    only_while_declaring(L, "param()");
    LuaScript &s = self(L);
    Param p;
    p.name = luaL_checkstring(L, 1);
    p.where = caller(L);
    if (!is_c_identifier(p.name))
      return luaL_argerror(L, 1, "parameter names must be C identifiers");
    for (const auto &other : s.decl_.params)
      if (other.name == p.name)
        return luaL_error(L, "parameter '%s' is declared twice", p.name.c_str());
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_getfield(L, 2, "type");
    auto type = param_type_named(luaL_optstring(L, -1, "int"));
    if (!type)
      return luaL_error(L, "parameter '%s': type must be int, uint, bool or string",
                        p.name.c_str());
    p.type = *type;
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
    p.positional = optional_bool(L, 2, "positional", false);
    if (p.positional && (!p.short_name.empty() || p.type == ParamType::Bool))
      return luaL_error(L,
                        "parameter '%s': a positional parameter has no short name and is not bool",
                        p.name.c_str());
    if (!p.positional && s.decl_.params.size() > s.first_param_ && s.decl_.params.back().positional)
      return luaL_error(L, "parameter '%s': declare options before positional parameters",
                        p.name.c_str());
    lua_getfield(L, 2, "choices");
    if (!lua_isnil(L, -1)) {
      if (!lua_istable(L, -1))
        return luaL_error(L, "parameter '%s': choices are a list of values", p.name.c_str());
      for (lua_Integer n = 1; lua_rawgeti(L, -1, n) != LUA_TNIL; n++) {
        if (!lua_isstring(L, -1))  // a number too
          return luaL_error(L, "parameter '%s': choices are strings or numbers", p.name.c_str());
        p.choices.push_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      if (p.choices.empty() || p.type == ParamType::Bool)
        return luaL_error(L, "parameter '%s': choices are a list of values, for a non-bool",
                          p.name.c_str());
      raising_errors(L, [&] {
        for (const auto &choice : p.choices)
          try {
            parse_param(p.type, choice);
          } catch (const Error &e) {
            throw Error("parameter '" + p.name + "': choice '" + choice + "': " + e.what());
          }
      });
    }
    raising_errors(L, [&] {
      try {
        check_choice(p, parse_param(p.type, p.default_text));
      } catch (const Error &e) {
        throw Error("parameter '" + p.name + "': bad default '" + p.default_text +
                    "': " + e.what());
      }
      p.value = parse_param(p.type, s.args_->take_value(p));
    });
    push_param_value(L, p);
    lua_getglobal(L, "params");
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, p.name.c_str());
    lua_pop(L, 1);
    s.decl_.params.push_back(std::move(p));
    return 1;
  }

  static void push_param_value(lua_State *L, const Param &p) {
    switch (p.type) {
      case ParamType::Int:
      case ParamType::Uint: lua_pushinteger(L, p.value.number); break;
      case ParamType::Bool: lua_pushboolean(L, p.value.number != 0); break;
      case ParamType::String: lua_pushstring(L, p.value.text.c_str()); break;
    }
  }
};

void install_declaration_builders(lua_State *L) {
  set_global_functions(L, {{"probe", LuaDeclarationBuilders::probe},
                           {"param", LuaDeclarationBuilders::param},
                           {"map", LuaDeclarationBuilders::map},
                           {"latency", LuaDeclarationBuilders::latency},
                           {"fxt", LuaDeclarationBuilders::fxt}});
  lua_newtable(L);
  lua_setglobal(L, "params");
  for (auto kind : {AggKind::Count, AggKind::Sum, AggKind::Min, AggKind::Max, AggKind::Avg,
                    AggKind::Stats, AggKind::Log2Hist, AggKind::LinearHist}) {
    lua_pushinteger(L, static_cast<lua_Integer>(kind));
    lua_pushcclosure(L, LuaDeclarationBuilders::aggregation, 1);
    lua_setglobal(L, agg_kind_name(kind));
  }
}

}  // namespace mt
