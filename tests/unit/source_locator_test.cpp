// Finding where in the script an expression was written.
#include "codegen/source_locator.h"

#include <gtest/gtest.h>

namespace mt {

TEST(SourceLocator, FindsTheExpressionInsideItsStringLiteral) {
  std::string src = "-- x > 1 in a comment\nprobe('t:a:b', {\n  filter = \"x > 1\",\n})\n";
  ScriptLocation at = locate_expression(src, "x > 1", {"s.lua", 2, 0});
  EXPECT_EQ(at.line, 3);
  EXPECT_EQ(at.column, 13);
  EXPECT_EQ(source_line(src, 3), "  filter = \"x > 1\",");
}

TEST(SourceLocator, KeepsTheCallLineWhenNotFound) {
  ScriptLocation at = locate_expression("probe(x .. y)\n", "a + b", {"s.lua", 1, 0});
  EXPECT_EQ(at.line, 1);
  EXPECT_EQ(at.column, 0);
}

TEST(SourceLocator, FindsAnExpressionBuiltAboveTheCallAndPrefersOneAtOrBelowIt) {
  std::string src = "local e = \"a + b\"\nprobe(e)\nprobe(\"a + b\")\n";
  EXPECT_EQ(locate_expression(src, "a + b", {"s.lua", 2, 0}).line, 3);
  ScriptLocation above = locate_expression(src, "a + b", {"s.lua", 4, 0});
  EXPECT_EQ(above.line, 1);
  EXPECT_EQ(above.column, 12);
  // One that begins on the line before the call's and ends on it.
  ScriptLocation spanning = locate_expression("x = [[a\nb]]\nprobe(x)\n", "a\nb", {"s.lua", 2, 0});
  EXPECT_EQ(spanning.line, 1);
  EXPECT_EQ(spanning.column, 7);
}

}  // namespace mt
