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

}  // namespace mt
