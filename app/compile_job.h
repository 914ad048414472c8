// Clang's run over generated C, which a stop signal does not wait for; a
// big script's in two parts at once (codegen/program_parts.h), one of
// them in a child process, linked into one object.
#pragma once
#include <string>

#include "compiler/clang_compiler.h"

namespace mt {

// SOURCE's object, as compile_bpf() compiles it, and its diagnostics;
// compiled in parts (unless MAY_SPLIT is false: C under --unsafe may hold
// directives that span programs), the rewritten source is the first
// part's, in which the second's programs are left as generated. Throws
// StoppedBeforeTracing on a stop signal, and mt::Error as compile_bpf().
// NOTE, when given, is told how it was compiled.
CompileResult compile_unless_stopped(const std::string &source, const CompileOptions &options,
                                     bool may_split, std::string *note = nullptr);

}  // namespace mt
