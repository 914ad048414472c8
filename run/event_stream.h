// Records from the kernel: one BPF ring buffer per CPU (per_cpu_rings.h),
// read in place;
// plus the per-probe counts of records that found no room. Records to be
// drawn are handed on in time order across CPUs (see reorder_window.h),
// the others as they are found.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "run/reorder_window.h"
#include "run/ring_reader.h"

namespace mt {

// Bytes of each per-CPU ring buffer: MOONTRACE_BUFFER_KB (a power of two,
// large enough for a few of the 8 KiB batches programs hand over), or 64 MiB
// shared among the CPUs, from 1 to 8 MiB each: a storm fills 8 MiB in about
// 10 ms, the time a reader may wait for its CPU on a busy machine.
uint32_t ring_buffer_bytes();

class EventStream {
 public:
  struct Consumer {
    // Bytes of each probe's records (by the probe id they begin with): the
    // kernel hands them over in batches, one after another, each from a
    // multiple of 8 bytes. 0: not a probe's.
    std::vector<uint32_t> record_bytes;
    // Each record as it is found; sets `draw_at` (ns, the BPF clock) for
    // one to be drawn in time order. False: take no more for now.
    std::function<bool(const unsigned char *data, uint32_t size, uint64_t &draw_at)> take;
    // The records given a time, in time order.
    ReorderWindow::Draw draw;
  };

  // `ring_fds`: one buffer per CPU (per_cpu_rings.h), which outlive this,
  // and `readers` mapping them; `flush_fd` the program that hands a CPU's staged records
  // to its ring, `staged_fd` the array of when each CPU staged its oldest
  // record held.
  EventStream(const std::vector<int> &ring_fds, std::vector<RingReader> &&readers, int lost_fd,
              int flush_fd, int staged_fd, size_t num_probes, Consumer consumer);
  ~EventStream();
  EventStream(const EventStream &) = delete;
  EventStream &operator=(const EventStream &) = delete;

  // Waits up to timeout_ms for a ring to fill up enough to wake us.
  void wait(int timeout_ms);
  // Takes what every ring holds, then draws what is surely complete: what
  // came 250 us (a record is committed a little after its time is read)
  // before the oldest record a CPU still holds staged; a CPU that held one
  // for a millisecond is made to hand it over. Returns the bytes taken.
  uint64_t take();
  // Takes what every ring held when it was called, and what the CPUs had
  // staged (asked again after the rings are read, a few times, when a full
  // ring kept it), and draws all of it: false when the consumer stopped it
  // (what it left stays buffered).
  bool drain();
  // Draws what is held, all of it (at the end).
  void release_all();
  // Records lost per probe since loading, summed over CPUs, with those
  // given up by the reorder window.
  std::vector<uint64_t> lost() const;
  uint64_t total_lost() const;

 private:
  void release(uint64_t watermark);
  void close_all();
  // Has a CPU hand over what it staged: false if it could not.
  bool flush_stage(size_t cpu);
  bool flush_stages();  // every CPU's: false if one could not
  // When the CPU staged the oldest record it holds (ns), 0 for none.
  uint64_t staged_since(size_t cpu) const;
  // Takes the records of one batch from `offset` on; false if stopped.
  bool take_batch(size_t cpu, const RingReader::Record &batch);

  std::vector<int> ring_fds_;
  std::vector<RingReader> rings_;
  ReorderWindow window_;
  Consumer consumer_;
  int epoll_fd_ = -1;
  int lost_fd_;
  int flush_fd_;
  std::vector<uint32_t> batch_offset_;  // by CPU: where a batch cut short goes on
  size_t num_probes_;
  std::vector<uint64_t> given_up_;         // by probe
  std::vector<uint64_t> last_ts_;          // by CPU: the time of its last record to draw
  size_t first_ring_ = 0;                  // rotates, so that no ring is always taken last
  bool stopped_ = false;                   // the last take was stopped by the consumer
  const unsigned char *staged_ = nullptr;  // mt_staged, mapped
  size_t staged_bytes_ = 0;
};

}  // namespace mt
