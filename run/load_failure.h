// Why the kernel refused to load an object, said of the script's probe.
#pragma once

#include <string>

#include "codegen/c_generator.h"
#include "common/error.h"

namespace mt {

// The error for a load that failed with `err` (libbpf's, negative), whose
// messages were `log`: at the line of the probe whose program the verifier
// refused, in the verifier's words (its whole log with -v), or in ours
// where they would mislead.
Error load_failure(int err, const std::string &log, const GeneratedProgram &generated,
                   const Declaration &decl, bool verbose);

}  // namespace mt
