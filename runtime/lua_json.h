// A Lua value as JSON, for what scripts report with -f json.
#pragma once
#include <string>

struct lua_State;

namespace mt {

// The value at `index`: a table with keys 1..n is an array, any other
// table an object (keys as strings, in sorted order so output is stable);
// integers stay integers; nil, functions and the like become null. Tables
// nested deeper than 32 levels (cycles) raise a Lua error.
std::string lua_to_json(lua_State *L, int index);

}  // namespace mt
