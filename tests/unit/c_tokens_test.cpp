// The shared scanner of C text: identifiers, members and struct tags.
#include "common/c_tokens.h"

#include <gtest/gtest.h>

namespace mt {
namespace {

std::vector<std::string> names(std::string_view text, bool members) {
  std::vector<std::string> out;
  for (const CIdentifier &id : c_identifiers(text))
    if (id.member == members)
      out.push_back(id.name);
  return out;
}

TEST(CTokens, TellsMembersFromFreeIdentifiers) {
  std::string_view e = "args->ctx->rings -> sq.head + len";
  EXPECT_EQ(names(e, false), (std::vector<std::string>{"args", "len"}));
  EXPECT_EQ(names(e, true), (std::vector<std::string>{"ctx", "rings", "sq", "head"}));
}

TEST(CTokens, SkipsLiteralsAndNumbers) {
  std::string_view e = R"(x == 'a' && s == "p->q \" r.s" && f > 1.5e-3 && h == 0x1fULL && g < .5)";
  EXPECT_EQ(names(e, false), (std::vector<std::string>{"x", "s", "f", "h", "g"}));
  EXPECT_TRUE(names(e, true).empty());
}

TEST(CTokens, SkipsComments) {
  std::string_view e = "a->b /* the ring's */ + c->d // e's\n + f /* g->h";
  EXPECT_EQ(names(e, false), (std::vector<std::string>{"a", "c", "f"}));
  EXPECT_EQ(names(e, true), (std::vector<std::string>{"b", "d"}));
}

// The code as the compiler reads it: continued lines joined first, so that
// a comment ends where the compiler ends it, and an unterminated literal
// ends with its line.
TEST(CTokens, CodeIsWhatTheCompilerReads) {
  CCode c = c_code("a /* x *\\\n/ b\nc 'd\ne \"f\\\"g\" // h\ni");
  EXPECT_EQ(c.code, "a   b\nc  0\ne  0  \ni");
  EXPECT_EQ(c.lines, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 4}));
  EXPECT_EQ(names("a\\  \nb", false), (std::vector<std::string>{"ab"}));
}

TEST(CTokens, KnowsTheIdentifierBeforeEach) {
  auto ids = c_identifiers("(struct  io_kiocb *)r + sizeof(union u)");
  ASSERT_EQ(ids.size(), 6u);
  EXPECT_EQ(ids[1].name, "io_kiocb");
  EXPECT_EQ(ids[1].previous, "struct");
  EXPECT_EQ(ids[2].previous, "");  // after the cast's ')' and '*'
  EXPECT_EQ(ids[5].previous, "union");
}

TEST(CTokens, IdentifiersAreCIdentifiers) {
  EXPECT_TRUE(is_c_identifier("_x1"));
  EXPECT_FALSE(is_c_identifier("1x"));
  EXPECT_FALSE(is_c_identifier("a-b"));
  EXPECT_FALSE(is_c_identifier(""));
}

}  // namespace
}  // namespace mt
