// Finds where an expression string stands in the script's source, so
// generated C can point Clang's diagnostics at the exact script column.
#pragma once
#include <optional>
#include <string>

#include "common/declaration.h"

namespace mt {

// Looks for `expr` inside a string literal at or after `near.line`; on
// success fills in line and column, otherwise returns `near` unchanged.
ScriptLocation locate_expression(const std::string &source, const std::string &expr,
                                 ScriptLocation near);

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
