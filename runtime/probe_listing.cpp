#include "runtime/probe_listing.h"

#include "compiler/probe_resolver.h"

namespace mt {

size_t list_probes(const std::string &, bool, KernelFacts &, std::FILE *) {
  return 0;  // filled in by the listing change
}

}  // namespace mt
