// BPF objects linked into one by libbpf's static linker: the parts of a
// split compile (app/compile_job.h).
#pragma once
#include <vector>

namespace mt {

// OBJECTS, each an ELF image, as one; throws mt::Error with libbpf's reason
// when they do not link.
std::vector<char> link_bpf_objects(const std::vector<std::vector<char>> &objects);

}  // namespace mt
