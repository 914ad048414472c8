// Makes the per-CPU ring buffers off the critical path of a start.
#include "run/per_cpu_rings.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "bpf_headers/mt_abi.h"
#include "common/error.h"
#include "run/stop_signals.h"

namespace mt {

namespace {

std::string failure(const char *what) {
  return std::string("cannot ") + what + ": " + std::strerror(errno);
}

}  // namespace

PerCpuRings::PerCpuRings(uint32_t bytes) : bytes_(bytes), cpus_(libbpf_num_possible_cpus()) {
  thread_ = std::thread([this] { make(); });
}

PerCpuRings::~PerCpuRings() {
  thread_.join();
}

void PerCpuRings::make() {
  std::exception_ptr error;
  std::vector<__u32> keys;
  try {
    if (cpus_ <= 0)
      throw Error("cannot count this machine's CPUs");
    for (int cpu = 0; cpu < cpus_; cpu++) {
      rings_.emplace_back(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mt_ring", 0, 0, bytes_, nullptr));
      if (!rings_.back())
        throw Error(failure("create a BPF ring buffer"));
      ring_fds_.push_back(rings_.back().get());
      readers_.emplace_back(ring_fds_.back(), bytes_);
      keys.push_back(cpu);
    }
    LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = static_cast<__u32>(ring_fds_[0]));
    outer_.reset(bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, MT_NAME(MT_RINGS), 4, 4, cpus_, &opts));
    if (!outer_)
      throw Error(failure("create the array of BPF ring buffers"));
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    error_ = error;
    done_ = true;
  }
  made_.notify_all();
  if (error)
    return;
  // Returns after the grace period; outer_fd() sees the rings in place
  // long before.
  __u32 count = keys.size();
  if (bpf_map_update_batch(outer_.get(), keys.data(), ring_fds_.data(), &count, nullptr) == 0)
    return;
  for (size_t i = 0; i < keys.size(); i++)  // kernels before 5.6: one slot at a time
    if (bpf_map_update_elem(outer_.get(), &keys[i], &ring_fds_[i], BPF_ANY) != 0) {
      install_error_ = errno;
      return;
    }
}

void PerCpuRings::wait_until_made() {
  std::unique_lock lock(mutex_);
  made_.wait(lock, [this] { return done_; });
  if (error_)
    std::rethrow_exception(error_);
}

int PerCpuRings::outer_fd() {
  wait_until_made();
  // Each slot shows its ring's id once the update has put it there.
  for (__u32 cpu = 0; cpu < ring_fds_.size();) {
    __u32 id = 0;
    if (bpf_map_lookup_elem(outer_.get(), &cpu, &id) != 0 && errno != ENOENT)
      throw Error(failure("read the array of BPF ring buffers"));
    if (id) {
      cpu++;
      continue;
    }
    if (int error = install_error_)
      throw Error(std::string("cannot install a per-CPU ring buffer: ") + std::strerror(error));
    stop_if_signalled_before_tracing();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return outer_.get();
}

const std::vector<int> &PerCpuRings::ring_fds() {
  wait_until_made();
  return ring_fds_;
}

std::vector<RingReader> &PerCpuRings::readers() {
  wait_until_made();
  return readers_;
}

}  // namespace mt
