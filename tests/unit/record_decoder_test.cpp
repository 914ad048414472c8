// Record decoding: layouts from BTF, bytes in, Lua tables and text out.
#include "run/record_decoder.h"

#include <bpf/btf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <lua.hpp>

#include "script/lua_values.h"

namespace mt {

namespace {

// struct mt_rec_0 { __u32 __probe; __s32 res; __u64 ud; char comm[16]; bool ok; void *p; }
struct btf *record_btf() {
  struct btf *b = btf__new_empty();
  int s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
  int u32 = btf__add_int(b, "unsigned int", 4, 0);
  int u64 = btf__add_int(b, "unsigned long long", 8, 0);
  int chr = btf__add_int(b, "char", 1, BTF_INT_SIGNED);
  int boolean = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);
  int arr = btf__add_array(b, u32, chr, 16);
  int ptr = btf__add_ptr(b, 0);
  btf__add_struct(b, "mt_rec_0", 48);
  btf__add_field(b, "__probe", u32, 0, 0);
  btf__add_field(b, "res", s32, 32, 0);
  btf__add_field(b, "ud", u64, 64, 0);
  btf__add_field(b, "comm", arr, 128, 0);
  btf__add_field(b, "ok", boolean, 256, 0);
  btf__add_field(b, "p", ptr, 320, 0);
  return b;
}

std::vector<unsigned char> record_bytes() {
  std::vector<unsigned char> rec(48);
  int res = -11;
  unsigned long long ud = 1234567890123ull;
  unsigned long long p = 0xffff888000001000ull;
  std::memcpy(&rec[4], &res, 4);
  std::memcpy(&rec[8], &ud, 8);
  std::memcpy(&rec[16], "nop_storm", 10);
  rec[32] = 1;
  std::memcpy(&rec[40], &p, 8);
  return rec;
}

}  // namespace

TEST(RecordDecoder, ReadsTheLayoutFromBtf) {
  struct btf *b = record_btf();
  auto layout = layout_from_btf(b, "mt_rec_0");
  ASSERT_TRUE(layout);
  ASSERT_EQ(layout->fields.size(), 5u);  // __probe is the header
  EXPECT_EQ(layout->fields[0].kind, FieldKind::Signed);
  EXPECT_EQ(layout->fields[2].kind, FieldKind::String);
  EXPECT_EQ(layout->fields[2].offset, 16u);
  EXPECT_EQ(layout->fields[3].kind, FieldKind::Bool);
  EXPECT_EQ(layout->fields[4].kind, FieldKind::Pointer);
  EXPECT_FALSE(layout_from_btf(b, "mt_rec_9"));
  btf__free(b);
}

TEST(RecordDecoder, TurnsBytesIntoALuaTable) {
  struct btf *b = record_btf();
  auto layout = layout_from_btf(b, "mt_rec_0");
  auto rec = record_bytes();
  lua_State *L = luaL_newstate();
  lua_newtable(L);
  push_record_fields(L, *layout, rec.data(), rec.size());
  lua_getfield(L, -1, "res");
  EXPECT_EQ(lua_tointeger(L, -1), -11);
  lua_getfield(L, -2, "ud");
  EXPECT_EQ(lua_tointeger(L, -1), 1234567890123ll);
  lua_getfield(L, -3, "comm");
  EXPECT_STREQ(lua_tostring(L, -1), "nop_storm");
  lua_getfield(L, -4, "ok");
  EXPECT_TRUE(lua_toboolean(L, -1));
  lua_close(L);
  btf__free(b);
}

TEST(RecordDecoder, FormatsARecordAsText) {
  struct btf *b = record_btf();
  auto layout = layout_from_btf(b, "mt_rec_0");
  auto rec = record_bytes();
  EXPECT_EQ(format_record(*layout, rec.data(), rec.size()),
            "res=-11 ud=1234567890123 comm=nop_storm ok=true p=0xffff888000001000");
  // A short record never reads past its end.
  EXPECT_EQ(format_record(*layout, rec.data(), 16), "res=-11 ud=1234567890123");
  btf__free(b);
}

// Found by record_decoder_fuzzer: a _Float16 was read and written as 8 bytes.
TEST(RecordDecoder, FloatsOtherThanFloatAndDoubleAreBytes) {
  struct btf *b = btf__new_empty();
  int half = btf__add_float(b, "_Float16", 2);
  int wide = btf__add_float(b, "long double", 16);
  int single = btf__add_float(b, "float", 4);
  RecordLayout h = layout_of_type(b, half);
  EXPECT_EQ(h.fields[0].kind, FieldKind::Bytes);
  EXPECT_EQ(layout_of_type(b, wide).fields[0].kind, FieldKind::Bytes);
  EXPECT_EQ(layout_of_type(b, single).fields[0].kind, FieldKind::Float);
  unsigned char bytes[2] = {0x00, 0x3c};  // 1.0 as _Float16
  std::vector<FieldValue> values = decode_fields(h, bytes, sizeof(bytes));
  EXPECT_EQ(field_text(values[0]), "003c");
  unsigned char out[2] = {};
  encode_field(h.fields[0], values[0], out);
  EXPECT_EQ(std::memcmp(out, bytes, 2), 0);
  btf__free(b);
}

}  // namespace mt
