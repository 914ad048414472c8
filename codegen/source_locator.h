// Finds where an expression string stands in the script's source, so
// generated C can point Clang's diagnostics at the exact script column.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/declaration.h"

namespace mt {

// Where each line of a text starts, found once: a script locates hundreds
// of expressions (uring 205), and counting lines from the top for each took
// a warm start 2 ms.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  // The offset where 1-based `line` starts; the text's size past its end.
  size_t start_of(int line) const;
  // The 1-based line holding `offset`, and its 1-based column there.
  std::pair<int, int> line_and_column(size_t offset) const;

 private:
  std::vector<size_t> starts_;
  size_t size_;
};

// Looks for `expr` inside a string literal at or after `near.line` of
// `source` (whose lines `lines` indexes); on success fills in line and
// column, otherwise returns `near` unchanged.
ScriptLocation locate_expression(const std::string &source, const LineIndex &lines,
                                 const std::string &expr, ScriptLocation near);

// The text of one line of `source` (1-based), without its newline.
std::string source_line(const std::string &source, int line);

}  // namespace mt

namespace mt {

// The declaration whose generated C holds line `line` of `generated_file`
// in `source` (the generated program): the place named by the last
// "/* ... (FILE:LINE) */" comment before it, which begins each probe and
// map. Line numbers follow the #line directives. Nothing if there is none.
std::optional<ScriptLocation> declaration_at_generated_line(const std::string &source,
                                                            const std::string &generated_file,
                                                            int line);

}  // namespace mt
