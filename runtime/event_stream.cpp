#include "runtime/event_stream.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "compiler/error.h"

namespace mt {

EventStream::EventStream(int rings_fd, int lost_fd, size_t num_probes, uint32_t bytes,
                         Handler handler)
    : lost_fd_(lost_fd), num_probes_(num_probes), handler_(std::move(handler)) {
  int cpus = libbpf_num_possible_cpus();
  std::vector<__u32> keys;
  for (int cpu = 0; cpu < cpus; cpu++) {
    int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mt_ring", 0, 0, bytes, nullptr);
    if (fd < 0)
      throw Error(std::string("cannot create a BPF ring buffer: ") + std::strerror(errno));
    ring_fds_.push_back(fd);
    keys.push_back(cpu);
    int err = rb_ ? ring_buffer__add(rb_, fd, on_record, this)
                  : ((rb_ = ring_buffer__new(fd, on_record, this, nullptr)) ? 0 : -errno);
    if (err)
      throw Error(std::string("cannot poll a BPF ring buffer: ") + std::strerror(-err));
  }
  // Each update of a map-in-map waits for an RCU grace period: install
  // every CPU's buffer in one batch where the kernel allows it.
  __u32 count = keys.size();
  if (bpf_map_update_batch(rings_fd, keys.data(), ring_fds_.data(), &count, nullptr) == 0)
    return;
  for (size_t i = 0; i < keys.size(); i++)
    if (bpf_map_update_elem(rings_fd, &keys[i], &ring_fds_[i], BPF_ANY) != 0)
      throw Error(std::string("cannot install a per-CPU ring buffer: ") + std::strerror(errno));
}

EventStream::~EventStream() {
  ring_buffer__free(rb_);
  for (int fd : ring_fds_)
    close(fd);
}

int EventStream::on_record(void *self, void *data, size_t size) {
  // A negative value makes libbpf stop, past this record.
  return static_cast<EventStream *>(self)->handler_(data, size) ? 0 : -ECANCELED;
}

int EventStream::poll(int timeout_ms) {
  int n = ring_buffer__poll(rb_, timeout_ms);
  return n < 0 && n != -EINTR ? n : (n < 0 ? 0 : n);
}

bool EventStream::drain() {
  return ring_buffer__consume(rb_) != -ECANCELED;
}

std::vector<uint64_t> EventStream::lost() const {
  std::vector<uint64_t> totals(num_probes_);
  std::vector<uint64_t> per_cpu(libbpf_num_possible_cpus());
  for (__u32 probe = 0; probe < num_probes_; probe++) {
    if (bpf_map_lookup_elem(lost_fd_, &probe, per_cpu.data()) != 0)
      continue;
    for (uint64_t v : per_cpu)
      totals[probe] += v;
  }
  return totals;
}

uint64_t EventStream::total_lost() const {
  uint64_t total = 0;
  for (uint64_t n : lost())
    total += n;
  return total;
}

}  // namespace mt
