// What a script's C text may hold before it is compiled. Without
// --unsafe, no preprocessor directive (a line starting with # or %:) and
// no _Pragma: the C is expressions and statements, and a directive could
// otherwise make the compiler read files or change how the engine's code
// is built. (The compiler only sees in-memory files in any case.)
#pragma once
#include <set>
#include <string>

#include "common/declaration.h"

namespace mt {

// Throws mt::Error at the line of the first directive in any expression,
// action, capture, key or C type of the declaration.
void check_no_directives(const Declaration &decl);

// The script and module files the declaration's C comes from: the only
// names #line may give in the generated C.
std::set<std::string> source_files(const Declaration &decl);

}  // namespace mt
