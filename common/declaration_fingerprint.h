// A digest of everything a declaration holds: two declarations with the
// same fingerprint generate the same C on the same kernel, so a start can
// reuse what an earlier one generated (app/front_end_cache.h).
#pragma once
#include <string>

#include "common/declaration.h"

namespace mt {

// SHA-256, as hex, of every field of DECL (a field added to a struct of
// declaration.h does not build until it is written here too).
std::string declaration_fingerprint(const Declaration &decl);

}  // namespace mt
