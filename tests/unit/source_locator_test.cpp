// Finding where in the script an expression was written.
#include "codegen/source_locator.h"

#include <gtest/gtest.h>

namespace mt {

namespace {
ScriptLocation locate(const std::string &source, const std::string &expr, ScriptLocation near) {
  return locate_expression(source, SourceIndex(source), expr, near);
}
}  // namespace

TEST(SourceLocator, FindsTheExpressionInsideItsStringLiteral) {
  std::string src = "-- x > 1 in a comment\nprobe('t:a:b', {\n  filter = \"x > 1\",\n})\n";
  ScriptLocation at = locate(src, "x > 1", {"s.lua", 2, 0});
  EXPECT_EQ(at.line, 3);
  EXPECT_EQ(at.column, 13);
  EXPECT_EQ(source_line(src, 3), "  filter = \"x > 1\",");
}

TEST(SourceLocator, IndexesLinesBothWays) {
  SourceIndex lines("ab\ncd\n\nef");
  EXPECT_EQ(lines.start_of(1), 0u);
  EXPECT_EQ(lines.start_of(2), 3u);
  EXPECT_EQ(lines.start_of(4), 7u);
  EXPECT_EQ(lines.start_of(5), 9u);  // past the end: the text's size
  EXPECT_EQ(lines.start_of(0), 9u);
  EXPECT_EQ(lines.line_and_column(0), std::make_pair(1, 1));
  EXPECT_EQ(lines.line_and_column(2), std::make_pair(1, 3));  // the newline ends its line
  EXPECT_EQ(lines.line_and_column(3), std::make_pair(2, 1));
  EXPECT_EQ(lines.line_and_column(6), std::make_pair(3, 1));
  EXPECT_EQ(lines.line_and_column(8), std::make_pair(4, 2));
}

TEST(SourceLocator, TellsWhatTheSourceSurelyDoesNotContain) {
  std::string text = "probe('t:a:b', { filter = \"args.x > 1\" })\n";
  SourceIndex index(text);
  for (size_t from = 0; from < text.size(); from++)  // every part of it
    for (size_t size = 0; from + size <= text.size(); size++)
      EXPECT_TRUE(index.may_contain(std::string_view(text).substr(from, size)));
  EXPECT_FALSE(index.may_contain("args.y > 1"));
  EXPECT_FALSE(index.may_contain(text + " "));  // longer than the text
  EXPECT_FALSE(SourceIndex("").may_contain("abcd"));
}

TEST(SourceLocator, KeepsTheCallLineWhenNotFound) {
  ScriptLocation at = locate("probe(x .. y)\n", "a + b", {"s.lua", 1, 0});
  EXPECT_EQ(at.line, 1);
  EXPECT_EQ(at.column, 0);
}

TEST(SourceLocator, FindsAnExpressionBuiltAboveTheCallAndPrefersOneAtOrBelowIt) {
  std::string src = "local e = \"a + b\"\nprobe(e)\nprobe(\"a + b\")\n";
  EXPECT_EQ(locate(src, "a + b", {"s.lua", 2, 0}).line, 3);
  ScriptLocation above = locate(src, "a + b", {"s.lua", 4, 0});
  EXPECT_EQ(above.line, 1);
  EXPECT_EQ(above.column, 12);
  // One that begins on the line before the call's and ends on it.
  ScriptLocation spanning = locate("x = [[a\nb]]\nprobe(x)\n", "a\nb", {"s.lua", 2, 0});
  EXPECT_EQ(spanning.line, 1);
  EXPECT_EQ(spanning.column, 7);
}

}  // namespace mt
