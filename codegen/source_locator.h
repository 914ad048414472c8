// Finds where an expression string stands in the script's source, so
// generated C can point Clang's diagnostics at the exact script column.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/declaration.h"

namespace mt {

// What a script's source is searched by, found once: a script locates
// hundreds of expressions (uring 205). Counting lines from the top for each
// took a warm start 2 ms, and searching the whole text for the many that
// were built by the script, not written in it, 1 ms.
class SourceIndex {
 public:
  explicit SourceIndex(std::string_view text);
  // The offset where 1-based `line` starts; the text's size past its end.
  size_t start_of(int line) const;
  // The 1-based line holding `offset`, and its 1-based column there.
  std::pair<int, int> line_and_column(size_t offset) const;
  // False when `part` is surely not in the text: one of its runs of 4
  // bytes is nowhere in it. (True may still be wrong.)
  bool may_contain(std::string_view part) const;

 private:
  static constexpr int kRunBits = 18;
  static uint32_t run_slot(const char *at);
  std::vector<size_t> starts_;
  size_t size_;
  std::vector<bool> runs_;  // by run_slot: a run of 4 bytes hashed there
};

// Looks for `expr` inside a string literal at or after `near.line` of
// `source` (which `index` indexes); on success fills in line and column,
// otherwise returns `near` unchanged.
ScriptLocation locate_expression(const std::string &source, const SourceIndex &index,
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
