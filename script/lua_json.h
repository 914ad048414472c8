// A Lua value as JSON, for what scripts report with -f json.
#pragma once
#include <string>

struct lua_State;

namespace mt {

// The value at `index`: a table with keys 1..n is an array (an empty one
// too), any other table an object (keys as strings, in sorted order so output is stable);
// integers stay integers; nil, functions and the like become null. No
// metamethod runs. A table that contains itself, one nested more than 64
// deep, or a key that is neither string, number nor boolean throws
// mt::Error (never a Lua error: callers catch it after their own cleanup).
std::string lua_to_json(lua_State *L, int index);

}  // namespace mt
