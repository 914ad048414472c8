// An object's maps created before libbpf loads it, so that several objects
// opened from one ELF can use the same maps and load their programs in
// parallel: libbpf verifies one object's programs one after another.
#pragma once
#include <vector>

struct bpf_object;

namespace mt {

// Creates the maps of `model` (opened, not loaded) as libbpf would create
// them at load: with the object's BTF, settings already given (sizes,
// initial values), .rodata frozen; a map that already has a descriptor
// (bpf_map__reuse_fd) is kept. Then makes every object of `users`, opened
// from the same ELF, use them. Returns false when a map is of a kind this
// does not create as libbpf would (pinned, .kconfig, maps of maps or
// programs, perf event arrays), or the kernel refuses one or an object
// cannot take one: load `model` alone then. Some of its maps may be ones
// made here by then, made whole, which libbpf does not create again.
bool create_shared_maps(struct bpf_object *model, const std::vector<struct bpf_object *> &users);

}  // namespace mt
