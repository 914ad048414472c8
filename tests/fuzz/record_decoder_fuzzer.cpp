// Fuzz target: a record layout and record bytes -> fields, text, JSON and a
// Lua table (run/record_decoder, script/lua_values). The layout is built as BTF, the way
// moontrace gets it from a compiled object: a struct of members of every
// kind Clang can lay out (integers, bools, enums, pointers, floats, char
// and other arrays, typedefs and qualifiers, nested structs, bitfields),
// at offsets of the input's choosing. The record is the rest of the input,
// shorter or longer than the struct, as a ring buffer may hand it over.
#include <bpf/btf.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <lua.hpp>
#include <memory>
#include <string>
#include <vector>

#include "run/record_decoder.h"
#include "script/lua_values.h"

namespace {

using Btf = std::unique_ptr<struct btf, void (*)(struct btf *)>;

// Base types every layout may use; their ids are 1..kBaseTypes.
int add_base_types(struct btf *b) {
  btf__add_int(b, "char", 1, BTF_INT_SIGNED);       // 1
  btf__add_int(b, "unsigned char", 1, 0);           // 2
  btf__add_int(b, "short", 2, BTF_INT_SIGNED);      // 3
  btf__add_int(b, "unsigned short", 2, 0);          // 4
  btf__add_int(b, "int", 4, BTF_INT_SIGNED);        // 5
  btf__add_int(b, "unsigned int", 4, 0);            // 6
  btf__add_int(b, "long long", 8, BTF_INT_SIGNED);  // 7
  btf__add_int(b, "unsigned long long", 8, 0);      // 8
  btf__add_int(b, "__int128", 16, BTF_INT_SIGNED);  // 9
  btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);        // 10
  btf__add_float(b, "_Float16", 2);                 // 11
  btf__add_float(b, "float", 4);                    // 12
  btf__add_float(b, "double", 8);                   // 13
  btf__add_float(b, "long double", 16);             // 14
  btf__add_ptr(b, 0);                               // 15: void *
  btf__add_ptr(b, 1);                               // 16: char *
  btf__add_enum(b, "e8", 1);                        // 17
  btf__add_enum_value(b, "A", -1);
  btf__add_enum(b, "e32", 4);  // 18
  btf__add_enum_value(b, "B", 7);
  btf__add_enum64(b, "e64", 8, true);  // 19
  btf__add_enum64_value(b, "C", 1ull << 40);
  return 19;
}

// A type for one member: a base type, or one built on an earlier type.
int add_member_type(FuzzedDataProvider &in, struct btf *b) {
  int existing = btf__type_cnt(b) - 1;
  int base = in.ConsumeIntegralInRange<int>(1, existing);
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return btf__add_array(b, 6, base, in.ConsumeIntegralInRange<uint32_t>(0, 64));
    case 1: return btf__add_array(b, 6, 1, in.ConsumeIntegralInRange<uint32_t>(0, 300));
    case 2: return btf__add_typedef(b, "t", base);
    case 3: return btf__add_const(b, base);
    case 4: return btf__add_volatile(b, base);
    case 5: return btf__add_ptr(b, base);
    default: return base;
  }
}

// struct NAME { members at offsets of the input's choosing }.
int add_struct(FuzzedDataProvider &in, struct btf *b, const char *name) {
  uint32_t size = in.ConsumeIntegralInRange<uint32_t>(0, 512);
  int members = in.ConsumeIntegralInRange<int>(0, 20);
  std::vector<int> types;
  for (int i = 0; i < members; i++)
    types.push_back(add_member_type(in, b));
  int id = btf__add_struct(b, name, size);
  if (id < 0)
    return id;
  for (int i = 0; i < members; i++) {
    static const char *kNames[] = {"res", "ud", "comm", "__ts", "__probe", "", "x", "ok"};
    const char *member = kNames[in.ConsumeIntegralInRange<int>(0, 7)];
    uint32_t bit_offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(0, size) * 8
                                           : in.ConsumeIntegral<uint32_t>();
    uint32_t bitfield = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(1, 64) : 0;
    btf__add_field(b, member, types[i], bit_offset, bitfield);
  }
  return id;
}

void decode_every_way(const mt::RecordLayout &layout, const std::string &record, lua_State *L) {
  std::vector<mt::FieldValue> values = mt::decode_fields(layout, record.data(), record.size());
  for (const auto &v : values) {
    mt::field_text(v);
    mt::field_json(v);
  }
  mt::format_record(layout, record.data(), record.size());
  mt::record_json(layout, record.data(), record.size());
  lua_newtable(L);
  mt::push_record_fields(L, layout, record.data(), record.size());
  lua_settop(L, 0);
  // Encoding what was decoded, into a buffer of the struct's size, as the
  // map readers do for fields inside it.
  std::vector<unsigned char> buffer(layout.size);
  for (size_t i = 0; i < values.size(); i++) {
    const mt::RecordField &f = layout.fields[i];
    if (uint64_t{f.offset} + f.size <= buffer.size())
      mt::encode_field(f, values[i], buffer.data());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  Btf b(btf__new_empty(), btf__free);
  add_base_types(b.get());
  // A nested struct first, so that members of the record may be one.
  if (in.ConsumeBool())
    add_struct(in, b.get(), "inner");
  int record_type = add_struct(in, b.get(), "mt_rec_0");
  std::string record = in.ConsumeRemainingBytesAsString();

  static lua_State *L = luaL_newstate();
  if (auto layout = mt::layout_from_btf(b.get(), "mt_rec_0"))
    decode_every_way(*layout, record, L);
  // A map's key or value may be any type, described as one field.
  for (int id = 1; id < static_cast<int>(btf__type_cnt(b.get())); id++)
    decode_every_way(mt::layout_of_type(b.get(), id), record, L);
  (void)record_type;
  return 0;
}
