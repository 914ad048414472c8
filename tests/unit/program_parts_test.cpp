// Generated C's programs dealt into the two parts of a split compile.
#include "codegen/program_parts.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace mt {
namespace {

std::string program(const std::string &name, size_t body_bytes) {
  return program_guard_open(name) + "int " + name + "(void *ctx) {\n" +
         std::string(body_bytes, ' ') + "\n}\n" + kProgramGuardClose;
}

bool has(const std::vector<std::string> &defines, const std::string &d) {
  return std::find(defines.begin(), defines.end(), d) != defines.end();
}

TEST(ProgramParts, EachProgramIsLeftOutOfExactlyOnePart) {
  std::string source = "struct shared { int x; };\n" + program("big", 900) +
                       program("small_a", 300) + program("small_b", 350) +
                       "static int helper(void) { return 0; }\n" + program("mid", 500);
  ProgramParts parts = program_parts(source);
  for (const char *name : {"big", "small_a", "small_b", "mid"}) {
    std::string skip = std::string("MT_SKIP_") + name;
    EXPECT_NE(has(parts.defines[0], skip), has(parts.defines[1], skip)) << name;
  }
  EXPECT_TRUE(has(parts.defines[0], "MT_PART=1"));
  EXPECT_TRUE(has(parts.defines[1], "MT_PART=2"));
  // The largest first, each to the lighter part: big alone, against mid,
  // small_b and small_a.
  EXPECT_TRUE(has(parts.defines[1], "MT_SKIP_big"));
  for (const char *name : {"mid", "small_b", "small_a"})
    EXPECT_TRUE(has(parts.defines[0], std::string("MT_SKIP_") + name)) << name;
  EXPECT_GT(parts.program_bytes, 2050u);
  EXPECT_LT(parts.program_bytes, source.size());
}

TEST(ProgramParts, OneProgramIsNotSplit) {
  ProgramParts parts = program_parts("int x;\n" + program("only", 100));
  EXPECT_TRUE(parts.defines[0].empty());
  EXPECT_TRUE(parts.defines[1].empty());
  EXPECT_GT(parts.program_bytes, 100u);
}

// A program's pieces (the functions of the probes sharing its tracepoint)
// count together, and its name goes to one part only.
TEST(ProgramParts, APiecesOfAProgramCountTogether) {
  std::string source = program("shared", 100) + program("alone", 500) + program("shared", 300) +
                       program("shared", 300);
  ProgramParts parts = program_parts(source);
  EXPECT_EQ(parts.defines[0], (std::vector<std::string>{"MT_SKIP_alone", "MT_PART=1"}));
  EXPECT_EQ(parts.defines[1], (std::vector<std::string>{"MT_SKIP_shared", "MT_PART=2"}));
}

// Only whole lines open a guard.
TEST(ProgramParts, OnlyLinesThatOpenAGuardCount) {
  std::string source = program("a", 10) + "  /* #ifndef MT_SKIP_x */\n" + program("b", 10);
  ProgramParts parts = program_parts(source);
  EXPECT_FALSE(has(parts.defines[0], "MT_SKIP_x") || has(parts.defines[1], "MT_SKIP_x"));
}

}  // namespace
}  // namespace mt
