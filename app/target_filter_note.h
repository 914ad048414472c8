// What -c and -p cannot keep, said once at the start.
#pragma once
#include <string>

#include "codegen/c_generator.h"

namespace mt {

// A line for stderr when the program's probes see work that kernel
// threads do for the traced processes, which the filter leaves out (block
// requests: whoever submits one issues it, often a kworker), unless they
// draw it on a flow (kept in any task); else "".
std::string target_filter_note(const Declaration &decl, const GeneratedProgram &program);

}  // namespace mt
