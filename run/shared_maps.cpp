// Creates an object's maps as libbpf 1.x would at load, for objects sharing them.
#include "run/shared_maps.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace mt {

namespace {

std::vector<struct bpf_map *> maps_of(struct bpf_object *obj) {
  std::vector<struct bpf_map *> maps;
  struct bpf_map *map;
  bpf_object__for_each_map(map, obj) {
    maps.push_back(map);
  }
  return maps;
}

bool ends_with(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether libbpf creates maps of this type with their BTF (it drops it for
// the kinds whose values the kernel does not describe by BTF).
bool created_with_btf(enum bpf_map_type type) {
  return type != BPF_MAP_TYPE_STACK_TRACE && type != BPF_MAP_TYPE_QUEUE &&
         type != BPF_MAP_TYPE_STACK;
}

bool supported(enum bpf_map_type type) {
  switch (type) {
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_RINGBUF:
    case BPF_MAP_TYPE_STACK_TRACE:
    case BPF_MAP_TYPE_QUEUE:
    case BPF_MAP_TYPE_STACK:
    case BPF_MAP_TYPE_TASK_STORAGE:
    case BPF_MAP_TYPE_BLOOM_FILTER: return true;
    default: return false;
  }
}

// One map as libbpf would create it; -1 (errno set) if the kernel refuses.
int create_one_like_libbpf(struct bpf_map *map, int btf_fd) {
  enum bpf_map_type type = bpf_map__type(map);
  bool btf = btf_fd >= 0 && created_with_btf(type);
  LIBBPF_OPTS(bpf_map_create_opts, opts, .btf_fd = btf ? static_cast<__u32>(btf_fd) : 0,
              .btf_key_type_id = btf ? bpf_map__btf_key_type_id(map) : 0,
              .btf_value_type_id = btf ? bpf_map__btf_value_type_id(map) : 0,
              .map_flags = bpf_map__map_flags(map), .map_extra = bpf_map__map_extra(map),
              .numa_node = bpf_map__numa_node(map));
  int fd = bpf_map_create(type, bpf_map__name(map), bpf_map__key_size(map),
                          bpf_map__value_size(map), bpf_map__max_entries(map), &opts);
  if (fd < 0 || !bpf_map__is_internal(map))
    return fd;
  // .rodata, .data, .bss: their contents, and .rodata frozen for the verifier.
  size_t size = 0;
  const void *initial = bpf_map__initial_value(map, &size);
  int zero = 0;
  if ((initial && bpf_map_update_elem(fd, &zero, initial, BPF_ANY) != 0) ||
      ((bpf_map__map_flags(map) & BPF_F_RDONLY_PROG) && bpf_map_freeze(fd) != 0)) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// Whether the value of type ID holds what the verifier matches against the
// BTF object the programs were loaded with, not another copy of it: graph
// roots and nodes, refcounts, kptrs (tagged pointers).
bool tied_to_programs_btf(const struct btf *btf, __u32 id, int depth = 0) {
  const struct btf_type *t = btf__type_by_id(btf, id);
  if (!id || !t)
    return false;
  if (depth > 32)
    return true;  // not worth finding out
  switch (btf_kind(t)) {
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_CONST:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_RESTRICT: return tied_to_programs_btf(btf, t->type, depth + 1);
    case BTF_KIND_PTR: {
      const struct btf_type *to = btf__type_by_id(btf, t->type);
      return to && btf_is_type_tag(to);
    }
    case BTF_KIND_ARRAY: return tied_to_programs_btf(btf, btf_array(t)->type, depth + 1);
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION: {
      std::string name = btf__name_by_offset(btf, t->name_off);
      if (name.starts_with("bpf_list_") || name.starts_with("bpf_rb_") || name == "bpf_refcount")
        return true;
      const struct btf_member *member = btf_members(t);
      for (int i = 0; i < btf_vlen(t); i++)
        if (tied_to_programs_btf(btf, member[i].type, depth + 1))
          return true;
      return false;
    }
    default: return false;
  }
}

// Whether the map behind FD has MAP's kind, sizes and flags as they are
// now (its BTF is the object's when the object is the same).
bool defines(struct bpf_map *map, int fd) {
  struct bpf_map_info info {};
  uint32_t size = sizeof(info);
  return bpf_obj_get_info_by_fd(fd, &info, &size) == 0 && info.type == bpf_map__type(map) &&
         info.key_size == bpf_map__key_size(map) && info.value_size == bpf_map__value_size(map) &&
         info.max_entries == bpf_map__max_entries(map) && info.map_flags == bpf_map__map_flags(map);
}

}  // namespace

size_t reuse_maps_made_ahead(struct bpf_object *obj, const MapsMadeAhead &made) {
  size_t reused = 0;
  for (const auto &[name, fd] : made.maps)
    if (struct bpf_map *map = bpf_object__find_map_by_name(obj, name.c_str());
        map && bpf_map__fd(map) < 0 && defines(map, fd.get()) &&
        bpf_map__reuse_fd(map, fd.get()) == 0)
      reused++;
  return reused;
}

bool creatable_before_load(struct bpf_object *obj, struct bpf_map *map) {
  const struct btf *btf = bpf_object__btf(obj);
  return !bpf_map__pin_path(map) &&  // libbpf pins, and unpins on failure, what it creates
         supported(bpf_map__type(map)) && !ends_with(bpf_map__name(map), ".kconfig") &&
         !(btf && tied_to_programs_btf(btf, bpf_map__btf_value_type_id(map)));
}

std::optional<std::vector<UniqueFd>> create_like_libbpf(struct bpf_object *model,
                                                        const std::vector<struct bpf_map *> &maps,
                                                        const std::atomic<bool> *cancelled) {
  if (maps.empty())
    return std::vector<UniqueFd>{};
  // The object's BTF, loaded apart: libbpf loads its own copy at load.
  struct btf *btf = nullptr;
  if (const struct btf *own = bpf_object__btf(model)) {
    uint32_t size = 0;
    const void *raw = btf__raw_data(own, &size);
    btf = btf__new(raw, size);
    if (!btf || btf__load_into_kernel(btf) != 0) {
      btf__free(btf);
      return std::nullopt;
    }
  }
  std::vector<UniqueFd> fds;
  for (struct bpf_map *map : maps) {
    fds.emplace_back(
        cancelled && *cancelled ? -1 : create_one_like_libbpf(map, btf ? btf__fd(btf) : -1));
    if (!fds.back())
      break;
  }
  btf__free(btf);  // the maps hold the kernel's copy
  if (!fds.back())
    return std::nullopt;
  return fds;
}

bool create_shared_maps(struct bpf_object *model, const std::vector<struct bpf_object *> &users) {
  std::vector<struct bpf_map *> maps = maps_of(model), to_create;
  for (struct bpf_map *map : maps) {
    if (bpf_map__pin_path(map) || (bpf_map__fd(map) < 0 && !creatable_before_load(model, map)))
      return false;
    if (bpf_map__fd(map) < 0)
      to_create.push_back(map);
  }
  auto created = create_like_libbpf(model, to_create);
  if (!created)
    return false;
  // A map's own descriptor is duplicated: reusing one closes the one it had.
  std::vector<UniqueFd> fds;
  for (size_t i = 0, made = 0; i < maps.size(); i++)
    fds.push_back(bpf_map__fd(maps[i]) >= 0
                      ? UniqueFd(fcntl(bpf_map__fd(maps[i]), F_DUPFD_CLOEXEC, 0))
                      : std::move((*created)[made++]));
  bool shared = true;
  for (size_t u = 0; shared && u < users.size(); u++) {
    std::vector<struct bpf_map *> theirs = maps_of(users[u]);
    shared = theirs.size() == maps.size();
    for (size_t i = 0; shared && i < maps.size(); i++)
      shared = fds[i] && bpf_map__reuse_fd(theirs[i], fds[i].get()) == 0;  // users hold duplicates
  }
  return shared;
}

}  // namespace mt
