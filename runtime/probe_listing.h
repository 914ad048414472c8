// moontrace -l [PATTERN]: the probes this kernel offers, one per line in
// the form a script names them; with `verbose`, each one's arguments.
#pragma once
#include <cstdio>
#include <string>

namespace mt {

class KernelFacts;

// Prints every probe matching the glob `pattern` ("" matches all) to `out`;
// returns how many matched.
size_t list_probes(const std::string &pattern, bool verbose, KernelFacts &kernel, std::FILE *out);

}  // namespace mt
