// Decoded record values onto the Lua stack, as handlers receive them.
#pragma once
#include <cstddef>

#include "run/record_decoder.h"

struct lua_State;

namespace mt {

void push_field_value(lua_State *L, const FieldValue &value);
// Sets one table field per record field on the table at the top of L.
void push_record_fields(lua_State *L, const RecordLayout &layout, const void *data, size_t size);

}  // namespace mt
