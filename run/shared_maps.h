// An object's maps created before libbpf loads it, so that several objects
// opened from one ELF can use the same maps and load their programs in
// parallel: libbpf verifies one object's programs one after another.
#pragma once
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

struct bpf_object;
struct bpf_map;

namespace mt {

// Whether MAP of OBJ (opened) can be created before the load as libbpf
// would create it: not pinned, not .kconfig, of a kind handled here, and
// with no value the verifier checks against the very BTF object the
// programs load with (the maps made here hold a copy of it).
bool creatable_before_load(struct bpf_object *obj, struct bpf_map *map);

// MAPS, of MODEL (opened, not loaded), created as libbpf would create them
// at load: with the object's BTF, sizes and initial values as set now,
// .rodata frozen. Their descriptors in order; none when one is refused,
// or CANCELLED is set before all are made.
std::optional<std::vector<UniqueFd>> create_like_libbpf(
    struct bpf_object *model, const std::vector<struct bpf_map *> &maps,
    const std::atomic<bool> *cancelled = nullptr);

// Maps of an object made before its load (run/maps_ahead.h), by name,
// and how many of its maps could have been.
struct MapsMadeAhead {
  std::map<std::string, UniqueFd> maps;
  size_t of = 0;
};

// Makes OBJ's maps (opened, not loaded) that have no descriptor yet use
// those of MADE whose definitions they share (a duplicate of each).
// Returns how many.
size_t reuse_maps_made_ahead(struct bpf_object *obj, const MapsMadeAhead &made);

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
