// Without --unsafe, a script's C may make the kernel trace and nothing
// else. Checked on the compiled object (freshly compiled or from the
// cache), never on the C text: every instruction of every code section is
// read for calls, and only the engine's own programs may be in it.
#pragma once
#include <string_view>

#include "codegen/c_generator.h"
#include "common/declaration.h"

namespace mt {

// Throws mt::Error naming the script line (from the object's line info) or
// the probe, the first time the object calls a helper outside the
// allow-list, calls a kfunc, holds a hand-made instruction, or defines a
// program the engine did not generate.
void check_tracing_only(std::string_view object, const GeneratedProgram &generated,
                        const Declaration &decl);

}  // namespace mt
