// Makes the expected object's maps on a thread, and hands them over if the guess was right;
// and parses the kernel's BTF its load will want.
#include "run/maps_ahead.h"

#include <bpf/libbpf.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>

#include "kernel/libbpf_messages.h"
#include "run/bpf_loader.h"
#include "run/kernel_btf_ahead.h"
#include "run/shared_maps.h"
#include "run/stop_signals.h"

namespace mt {

struct MapsAhead::State {
  std::atomic<bool> cancelled{false};
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::vector<char> object;
  MapsMadeAhead made;
};

namespace {

using Object = std::unique_ptr<struct bpf_object, decltype(&bpf_object__close)>;

// The maps of OBJECT that BpfProgram::load would create for such a run,
// by name: all but those whose contents the run sets (.rodata, .data,
// .bss) and those made otherwise (the rings; pinned ones). None when the
// object cannot be opened, the kernel refuses one, or CANCELLED is set.
MapsMadeAhead make_maps(const std::vector<char> &object, bool filter_targets, bool marks,
                        const std::atomic<bool> &cancelled) {
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "moontrace");
  Object obj(bpf_object__open_mem(object.data(), object.size(), &opts), bpf_object__close);
  MapsMadeAhead made;
  if (!obj)
    return made;
  size_maps_for_run(obj.get(), filter_targets, marks);
  std::vector<struct bpf_map *> maps;
  struct bpf_map *map;
  bpf_object__for_each_map(map, obj.get()) {
    if (!bpf_map__is_internal(map) && creatable_before_load(obj.get(), map))
      maps.push_back(map);
  }
  made.of = maps.size();
  if (auto fds = create_like_libbpf(obj.get(), maps, &cancelled))
    for (size_t i = 0; i < maps.size(); i++)
      made.maps.emplace(bpf_map__name(maps[i]), std::move((*fds)[i]));
  return made;
}

}  // namespace

MapsAhead::MapsAhead(std::string key, Fetch fetch, bool filter_targets, bool marks)
    : key_(std::move(key)), state_(std::make_shared<State>()) {
  keep_libbpf_messages();
  // Stop signals go to the main thread, whose waits they end.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    thread_ = std::thread([state = state_, fetch = std::move(fetch), filter_targets, marks] {
      MapsMadeAhead made;
      std::vector<char> object;
      try {
        if (auto fetched = fetch()) {
          std::string_view bytes(fetched->data(), fetched->size());
          // The kernel's BTF libbpf would parse to load it
          // (kernel_btf_ahead.h), on a thread of its own: both take
          // milliseconds, and the load waits for both.
          std::jthread btf;
          if (needs_kernel_btf(bytes)) {
            try {
              btf = std::jthread([bytes, state] {
                try {
                  parse_kernel_btf_ahead(bytes, state->cancelled);
                } catch (...) {  // only a guess: the load parses its own
                }
              });
            } catch (const std::system_error &) {  // no thread: parsed here
              parse_kernel_btf_ahead(bytes, state->cancelled);
            }
          }
          made = make_maps(*fetched, filter_targets, marks, state->cancelled);
          if (btf.joinable())
            btf.join();
          object = std::move(*fetched);
        }
      } catch (...) {  // only a guess: the load makes the maps itself
        made = {};
      }
      std::lock_guard lock(state->mutex);
      state->made = std::move(made);
      state->object = std::move(object);
      state->done = true;
      state->finished.notify_all();
    });
  } catch (const std::system_error &) {  // no thread: nothing made ahead
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

MapsAhead::~MapsAhead() {
  state_->cancelled = true;
  if (!thread_.joinable())
    return;
  if (stop_signal())
    thread_.detach();
  else
    thread_.join();
}

MapsMadeAhead MapsAhead::take(const std::string &key, const std::vector<char> &object) {
  if (!thread_.joinable())
    return {};
  if (key != key_)
    state_->cancelled = true;
  {
    std::unique_lock lock(state_->mutex);
    while (!state_->finished.wait_for(lock, std::chrono::milliseconds(10),
                                      [&] { return state_->done; }))
      if (stop_signal()) {
        state_->cancelled = true;
        lock.unlock();
        stop_if_signalled_before_tracing();
      }
  }
  thread_.join();
  bool same = key == key_ && object == state_->object;
  std::vector<char>().swap(state_->object);  // compared: not kept for the run
  if (!same)
    return {};
  return std::move(state_->made);
}

}  // namespace mt
