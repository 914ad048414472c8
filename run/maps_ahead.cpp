// Makes the expected object's maps on a thread, and hands them over if the guess was right.
#include "run/maps_ahead.h"

#include <bpf/libbpf.h>

#include <system_error>

#include "run/bpf_loader.h"
#include "run/shared_maps.h"

namespace mt {

namespace {

// The maps of OBJECT that BpfProgram::load would create for such a run,
// by name: all but those whose contents the run sets (.rodata, .data,
// .bss) and those made otherwise (the rings; pinned ones). None when the
// object cannot be opened or the kernel refuses one.
std::map<std::string, UniqueFd> make_maps(const std::vector<char> &object, bool filter_targets,
                                          bool marks) {
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "moontrace");
  struct bpf_object *obj = bpf_object__open_mem(object.data(), object.size(), &opts);
  std::map<std::string, UniqueFd> made;
  if (!obj)
    return made;
  size_maps_for_run(obj, filter_targets, marks);
  std::vector<struct bpf_map *> maps;
  struct bpf_map *map;
  bpf_object__for_each_map(map, obj) {
    if (!bpf_map__is_internal(map) && creatable_before_load(map))
      maps.push_back(map);
  }
  if (auto fds = create_like_libbpf(obj, maps))
    for (size_t i = 0; i < maps.size(); i++)
      made.emplace(bpf_map__name(maps[i]), std::move((*fds)[i]));
  bpf_object__close(obj);
  return made;
}

}  // namespace

MapsAhead::MapsAhead(Fetch fetch, bool filter_targets, bool marks) {
  capture_libbpf_messages();
  try {
    thread_ = std::thread([this, fetch = std::move(fetch), filter_targets, marks] {
      try {
        if (auto object = fetch()) {
          maps_ = make_maps(*object, filter_targets, marks);
          object_ = std::move(*object);
        }
      } catch (...) {  // only a guess: the load makes the maps itself
        maps_.clear();
      }
    });
  } catch (const std::system_error &) {  // no thread: nothing made ahead
  }
}

MapsAhead::~MapsAhead() {
  if (thread_.joinable())
    thread_.join();
}

std::map<std::string, int> MapsAhead::made_for(const std::vector<char> &object) {
  if (thread_.joinable())
    thread_.join();
  if (object != object_)
    maps_.clear();
  std::map<std::string, int> fds;
  for (const auto &[name, fd] : maps_)
    fds[name] = fd.get();
  return fds;
}

}  // namespace mt
