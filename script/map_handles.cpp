// What map and aggregation handles do while tracing: get, set, delete, entries, clear, print.
#include "output/aggregation_format.h"
#include "run/kernel_maps.h"
#include "script/lua_api.h"
#include "script/lua_values.h"

namespace mt {

struct LuaMapHandles : LuaApi {
  // Run phase: map and aggregation handles read the kernel's maps.
  static KernelMaps &kernel_maps(lua_State *L) {
    LuaScript &s = self(L);
    if (!s.maps_)
      luaL_error(L, "maps can be read only while tracing (in a handler or at end)");
    return *s.maps_;
  }

  static int handle_id(lua_State *L, const char *type) {
    return *static_cast<int *>(luaL_checkudata(L, 1, type));
  }

  static void push_fields(lua_State *L, const RecordLayout &layout,
                          const std::vector<FieldValue> &values) {
    if (layout.fields.size() == 1 && layout.fields[0].name.empty()) {
      push_field_value(L, values[0]);
      return;
    }
    lua_createtable(L, 0, static_cast<int>(values.size()));
    for (size_t i = 0; i < values.size(); i++) {
      push_field_value(L, values[i]);
      lua_setfield(L, -2, layout.fields[i].name.c_str());
    }
  }

  // The Lua value at `index` as bytes of `layout` (a scalar, or a table
  // with one entry per struct field).
  static std::vector<char> to_bytes(lua_State *L, int index, const RecordLayout &layout,
                                    const char *what) {
    std::vector<char> bytes(layout.size, 0);
    index = lua_absindex(L, index);
    bool scalar = layout.fields.size() == 1 && layout.fields[0].name.empty();
    if (!scalar)
      luaL_checktype(L, index, LUA_TTABLE);
    for (const auto &f : layout.fields) {
      if (!scalar)
        lua_getfield(L, index, f.name.c_str());
      int at = scalar ? index : -1;
      FieldValue v;
      v.kind = f.kind;
      if (f.kind == FieldKind::String || f.kind == FieldKind::Bytes) {
        size_t len;
        const char *text = luaL_checklstring(L, at, &len);
        v.s.assign(text, len);
      } else if (f.kind == FieldKind::Float) {
        v.f = luaL_checknumber(L, at);
      } else if (f.kind == FieldKind::Bool) {
        v.u = lua_toboolean(L, at);
      } else if (lua_isinteger(L, at)) {
        v.kind = FieldKind::Signed;
        v.i = lua_tointeger(L, at);
      } else {
        luaL_error(L, "%s field '%s' needs an integer", what, f.name.c_str());
      }
      encode_field(f, v, bytes.data());
      if (!scalar)
        lua_pop(L, 1);
    }
    return bytes;
  }

  static int map_get(lua_State *L) {
    int id = handle_id(L, kMapType);
    KernelMaps &maps = kernel_maps(L);
    std::vector<char> value;
    if (!maps.lookup(id, to_bytes(L, 2, maps.key_layout(id), "key"), value)) {
      lua_pushnil(L);
      return 1;
    }
    push_fields(L, maps.value_layout(id),
                decode_fields(maps.value_layout(id), value.data(), value.size()));
    return 1;
  }

  static int map_set(lua_State *L) {
    int id = handle_id(L, kMapType);
    KernelMaps &maps = kernel_maps(L);
    std::vector<char> key = to_bytes(L, 2, maps.key_layout(id), "key");
    std::vector<char> value = to_bytes(L, 3, maps.value_layout(id), "value");
    raising_errors(L, [&] { maps.update(id, key, value); });
    return 0;
  }

  static int map_delete(lua_State *L) {
    int id = handle_id(L, kMapType);
    KernelMaps &maps = kernel_maps(L);
    maps.remove(id, to_bytes(L, 2, maps.key_layout(id), "key"));
    return 0;
  }

  static int map_entries(lua_State *L) {
    MapSnapshot snap = kernel_maps(L).map(handle_id(L, kMapType));
    lua_createtable(L, static_cast<int>(snap.entries.size()), 0);
    for (size_t i = 0; i < snap.entries.size(); i++) {
      lua_createtable(L, 0, 2);
      push_fields(L, snap.key, snap.entries[i].key);
      lua_setfield(L, -2, "key");
      push_fields(L, snap.value, snap.entries[i].value);
      lua_setfield(L, -2, "value");
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    return 1;
  }

  static int map_clear(lua_State *L) {
    kernel_maps(L).clear_map(handle_id(L, kMapType));
    return 0;
  }

  static int map_print(lua_State *L) {
    kernel_maps(L);
    self(L).print_map(handle_id(L, kMapType));
    return 0;
  }

  // Rows as tables: key fields, then value (count, sum, min, max, avg),
  // count/sum/min/max/avg (stats) or count and buckets (histograms).
  static int aggregation_entries(lua_State *L) {
    AggregationSnapshot snap = kernel_maps(L).aggregation(handle_id(L, kAggregationType));
    const AggregationDecl &d = *snap.decl;
    lua_createtable(L, static_cast<int>(snap.rows.size()), 0);
    for (size_t i = 0; i < snap.rows.size(); i++) {
      const AggregationRow &r = snap.rows[i];
      lua_createtable(L, 0, 6);
      for (size_t k = 0; k < d.keys.size() && k < r.key.size(); k++) {
        push_field_value(L, r.key[k]);
        lua_setfield(L, -2, d.keys[k].name.c_str());
      }
      auto set = [&](const char *name, lua_Integer v) {
        lua_pushinteger(L, v);
        lua_setfield(L, -2, name);
      };
      lua_Integer avg = r.count ? r.sum / static_cast<int64_t>(r.count) : 0;
      switch (d.kind) {
        case AggKind::Count: set("value", static_cast<lua_Integer>(r.count)); break;
        case AggKind::Sum: set("value", r.sum); break;
        case AggKind::Min: set("value", r.min); break;
        case AggKind::Max: set("value", r.max); break;
        case AggKind::Avg: set("value", avg); break;
        case AggKind::Stats:
          set("count", static_cast<lua_Integer>(r.count));
          set("sum", r.sum);
          set("min", r.min);
          set("max", r.max);
          set("avg", avg);
          break;
        default: {
          set("count", static_cast<lua_Integer>(r.count));
          auto buckets = histogram_buckets(d, r);
          lua_createtable(L, static_cast<int>(buckets.size()), 0);
          for (size_t b = 0; b < buckets.size(); b++) {
            lua_createtable(L, 0, 3);
            if (buckets[b].has_low)
              set("min", buckets[b].low);
            if (buckets[b].has_high)
              set("max", buckets[b].high);
            set("count", static_cast<lua_Integer>(buckets[b].count));
            lua_rawseti(L, -2, static_cast<lua_Integer>(b + 1));
          }
          lua_setfield(L, -2, "buckets");
        }
      }
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    return 1;
  }

  static int aggregation_clear(lua_State *L) {
    kernel_maps(L).clear_aggregation(handle_id(L, kAggregationType));
    return 0;
  }

  static int aggregation_print(lua_State *L) {
    kernel_maps(L);
    self(L).print_aggregation(handle_id(L, kAggregationType));
    return 0;
  }

  // handle.name, else a method.
  static int handle_index(lua_State *L) {
    LuaScript &s = self(L);
    std::string key = luaL_checkstring(L, 2);
    bool aggregation = luaL_testudata(L, 1, kAggregationType) != nullptr;
    int id = *static_cast<int *>(lua_touserdata(L, 1));
    if (key == "name") {
      lua_pushstring(
          L, aggregation ? s.decl_.aggregations[id].name.c_str() : s.decl_.maps[id].name.c_str());
      return 1;
    }
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "methods");
    lua_getfield(L, -1, key.c_str());
    return 1;
  }

  static void register_handle_types(lua_State *L) {
    const luaL_Reg map_methods[] = {{"get", map_get},       {"set", map_set},
                                    {"delete", map_delete}, {"entries", map_entries},
                                    {"clear", map_clear},   {"print", map_print},
                                    {nullptr, nullptr}};
    const luaL_Reg aggregation_methods[] = {{"entries", aggregation_entries},
                                            {"clear", aggregation_clear},
                                            {"print", aggregation_print},
                                            {nullptr, nullptr}};
    for (auto [type, methods] :
         {std::pair{kMapType, map_methods}, std::pair{kAggregationType, aggregation_methods}}) {
      luaL_newmetatable(L, type);
      lua_newtable(L);  // not luaL_newlib: `methods` is a pointer here, not an array
      luaL_setfuncs(L, methods, 0);
      lua_setfield(L, -2, "methods");
      lua_pushcfunction(L, handle_index);
      lua_setfield(L, -2, "__index");
      lua_pop(L, 1);
    }
  }
};

void install_map_handles(lua_State *L) {
  LuaMapHandles::register_handle_types(L);
}

}  // namespace mt
