// Creates the per-CPU ring buffers and takes records from them, drawn ones in time order.
#include "run/event_stream.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bpf_headers/mt_abi.h"
#include "common/bpf_clock.h"
#include "common/error.h"

namespace mt {

namespace {

// How late a record may be committed after its program read the time: a
// program runs for microseconds, a little more when interrupts nest in it.
constexpr uint64_t kReorderNs = 250000;
// A CPU that has held staged records this long is made to hand them over
// (a busy CPU hands them over by itself, every few hundred records).
constexpr uint64_t kFlushAfterNs = 1000000;
constexpr size_t kStagedSlotBytes = sizeof(struct mt_staged_since);
// A take reads this much of a ring at most before it draws what it can
// and gives the room back: holding a whole ring while drawing it would
// leave the CPU no room for that long.
constexpr uint64_t kTakeBytes = 256 << 10;
// Times a drain reads the rings and asks the CPUs again for what they kept
// staged (their ring was full, or a program was writing there).
constexpr int kDrainRounds = 4;

}  // namespace

uint32_t ring_buffer_bytes() {
  const char *kb = std::getenv("MOONTRACE_BUFFER_KB");
  if (!kb || !*kb) {
    long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_CONF));
    return std::clamp(std::bit_floor(uint32_t((64u << 20) / cpus)), 1u << 20, 8u << 20);
  }
  char *end;
  unsigned long n = std::strtoul(kb, &end, 10);
  if (*end || n < 64 || n > (1u << 20) || (n & (n - 1)))
    throw Error(std::string("MOONTRACE_BUFFER_KB=") + kb +
                ": expected a power of two from 64 to 1048576");
  return static_cast<uint32_t>(n << 10);
}

EventStream::EventStream(const std::vector<int> &ring_fds, std::vector<RingReader> &&readers,
                         int lost_fd, int flush_fd, int staged_fd, size_t num_probes,
                         Consumer consumer)
    : ring_fds_(ring_fds),
      rings_(std::move(readers)),
      window_(ring_fds_.size()),
      consumer_(std::move(consumer)),
      lost_fd_(lost_fd),
      flush_fd_(flush_fd),
      batch_offset_(ring_fds_.size()),
      num_probes_(num_probes),
      given_up_(num_probes),
      last_ts_(ring_fds_.size(), bpf_clock_ns()) {
  try {
    if (staged_fd >= 0) {
      size_t page = sysconf(_SC_PAGESIZE);
      staged_bytes_ = (ring_fds_.size() * kStagedSlotBytes + page - 1) / page * page;
      void *staged = mmap(nullptr, staged_bytes_, PROT_READ, MAP_SHARED, staged_fd, 0);
      if (staged == MAP_FAILED)
        throw Error(std::string("cannot map the staged records' times: ") + std::strerror(errno));
      staged_ = static_cast<const unsigned char *>(staged);
    }
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0)
      throw Error(std::string("cannot poll the BPF ring buffers: ") + std::strerror(errno));
    for (size_t cpu = 0; cpu < ring_fds_.size(); cpu++) {
      // Edge-triggered: a wake-up is reported once, so records left in a
      // ring on purpose (held for ordering) do not keep waking us.
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLET;
      ev.data.u32 = cpu;
      if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, ring_fds_[cpu], &ev) != 0)
        throw Error(std::string("cannot poll a BPF ring buffer: ") + std::strerror(errno));
    }
  } catch (...) {
    close_all();
    throw;
  }
}

EventStream::~EventStream() {
  close_all();
}

void EventStream::close_all() {
  if (staged_)
    munmap(const_cast<unsigned char *>(staged_), staged_bytes_);
  staged_ = nullptr;
  rings_.clear();
  if (epoll_fd_ >= 0)
    close(epoll_fd_);
  epoll_fd_ = -1;
}

void EventStream::wait(int timeout_ms) {
  if (timeout_ms <= 0)
    return;
  epoll_event events[8];
  epoll_wait(epoll_fd_, events, 8, timeout_ms);
}

bool EventStream::flush_stage(size_t cpu) {
  if (flush_fd_ < 0)
    return true;
  // A program may be writing to the stage right then: it is done within
  // microseconds, so try again a few times.
  for (int attempt = 0; attempt < 4; attempt++) {
    LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU,
                .cpu = static_cast<__u32>(cpu));
    if (bpf_prog_test_run_opts(flush_fd_, &run) != 0)
      return errno == ENXIO;  // an offline CPU runs no programs either
    if (run.retval == 1)
      return true;
  }
  return false;
}

bool EventStream::flush_stages() {
  bool all = true;
  for (size_t cpu = 0; cpu < rings_.size(); cpu++)
    all &= flush_stage(cpu);
  return all;
}

uint64_t EventStream::staged_since(size_t cpu) const {
  if (!staged_)
    return 0;
  return __atomic_load_n(reinterpret_cast<const uint64_t *>(staged_ + cpu * kStagedSlotBytes),
                         __ATOMIC_ACQUIRE);
}

bool EventStream::take_batch(size_t cpu, const RingReader::Record &batch) {
  uint32_t &offset = batch_offset_[cpu];
  while (offset + 4 <= batch.size) {
    const unsigned char *data = batch.data + offset;
    uint32_t probe;
    std::memcpy(&probe, data, 4);
    uint32_t bytes = probe < consumer_.record_bytes.size() ? consumer_.record_bytes[probe] : 0;
    if (!bytes || offset + bytes > batch.size)
      break;  // not a record of ours: the rest of the batch cannot be told apart
    offset += (bytes + 7) & ~7u;
    uint64_t ts = UINT64_MAX;
    bool more = consumer_.take(data, bytes, ts);
    if (ts != UINT64_MAX) {
      last_ts_[cpu] = ts;
      if (!window_.hold(cpu, ts, data, bytes, batch.pos) && probe < given_up_.size())
        given_up_[probe]++;
    }
    if (!more)
      return false;
  }
  return true;
}

uint64_t EventStream::take() {
  // Every record older than what a CPU still holds staged is in a ring
  // now, or about to be committed (the margin).
  uint64_t now = bpf_clock_ns(), staged_before = now;
  for (size_t cpu = 0; cpu < rings_.size(); cpu++) {
    uint64_t since = staged_since(cpu);
    if (!since)
      continue;
    if (now - since > kFlushAfterNs && flush_stage(cpu))
      continue;
    staged_before = std::min(staged_before, since);
  }
  uint64_t watermark = staged_before - kReorderNs, taken = 0;
  bool stopped = false;
  RingReader::Record r;
  for (size_t i = 0; i < rings_.size(); i++) {
    size_t cpu = (first_ring_ + i) % rings_.size();
    RingReader &ring = rings_[cpu];
    uint64_t from = ring.read_position();
    bool cut = false;
    while (!stopped && !(cut = ring.read_position() - from >= kTakeBytes) && ring.peek(r)) {
      stopped = !take_batch(cpu, r);
      if (stopped && batch_offset_[cpu] + 4 <= r.size)
        break;  // the rest of this batch waits for the next take
      ring.advance(r);
      batch_offset_[cpu] = 0;
    }
    taken += ring.read_position() - from;
    if (cut)  // what it still holds is about as old as its last record
      watermark = std::min(watermark, last_ts_[cpu]);
    if (stopped) {
      // A ring not emptied holds records about as old as its last one.
      for (size_t j = i; j < rings_.size(); j++) {
        size_t other = (first_ring_ + j) % rings_.size();
        if (rings_[other].unread())
          watermark = std::min(watermark, last_ts_[other]);
      }
      break;
    }
  }
  first_ring_ = (first_ring_ + 1) % rings_.size();
  stopped_ = stopped;
  release(watermark);
  return taken;
}

void EventStream::release(uint64_t watermark) {
  window_.release(watermark, consumer_.draw);
  for (size_t cpu = 0; cpu < rings_.size(); cpu++) {
    auto held = window_.oldest_position(cpu);
    rings_[cpu].release_to(held ? *held : rings_[cpu].read_position());
  }
}

bool EventStream::drain() {
  // What was there when the drain began (staged records included): a storm
  // that goes on cannot keep it going. A CPU whose ring was full kept what
  // it staged: once the rings are read, it is asked again, a few times.
  for (int round = 0; round < kDrainRounds; round++) {
    bool handed_over = flush_stages();
    std::vector<uint64_t> until;
    for (auto &ring : rings_)
      until.push_back(ring.produced());
    for (;;) {
      bool left = false;
      for (size_t cpu = 0; cpu < rings_.size(); cpu++)
        left |= rings_[cpu].read_position() < until[cpu];
      if (!left)
        break;
      uint64_t taken = take();
      if (stopped_)
        return false;
      if (!taken)
        break;  // a record still being written
    }
    if (handed_over)
      break;
  }
  release_all();
  return true;
}

void EventStream::release_all() {
  release(UINT64_MAX);
}

std::vector<uint64_t> EventStream::lost() const {
  std::vector<uint64_t> totals = given_up_;
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
