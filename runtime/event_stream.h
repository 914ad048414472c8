// Records from the kernel: one BPF ring buffer per CPU, created here and
// placed in the program's mt_rings array before events flow, polled
// together; plus the per-probe counts of records that found no room.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

struct bpf_object;
struct ring_buffer;

namespace mt {

class EventStream {
 public:
  // Takes one record; false stops the poll or drain under way after it
  // (the rest stays buffered), so that a slow handler cannot keep the
  // caller in one call for as long as records keep coming.
  using Handler = std::function<bool(const void *data, size_t size)>;

  // `rings_fd` is the loaded outer map; one buffer of `bytes` per CPU.
  EventStream(int rings_fd, int lost_fd, size_t num_probes, uint32_t bytes, Handler handler);
  ~EventStream();
  EventStream(const EventStream &) = delete;
  EventStream &operator=(const EventStream &) = delete;

  // Delivers what is ready, waiting up to timeout_ms; returns the count.
  int poll(int timeout_ms);
  // Delivers everything buffered in every ring, now: afterwards every
  // record committed before the call has been delivered, unless the
  // handler stopped it (then false).
  bool drain();
  // Records lost per probe since loading, summed over CPUs.
  std::vector<uint64_t> lost() const;
  uint64_t total_lost() const;

 private:
  static int on_record(void *self, void *data, size_t size);

  ring_buffer *rb_ = nullptr;
  std::vector<int> ring_fds_;
  int lost_fd_;
  size_t num_probes_;
  Handler handler_;
};

}  // namespace mt
