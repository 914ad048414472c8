// One BPF ring buffer read in place: its pages are mapped into this
// process, records are looked at where the kernel wrote them, and the
// kernel may reuse their room only once release_to() passes them. The data
// pages are mapped once, not twice in a row as libbpf does, so that they
// count once in the resident memory: the one record that wraps around the
// end is copied aside (it is the only one until it is released: the next
// one to wrap needs its room). The
// consumer position is published once per batch, not once per record as
// libbpf does: each publication is a cache line the producing CPU then
// misses on its next reservation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mt {

class RingReader {
 public:
  // A committed record: its bytes, and where it begins and ends in the ring.
  struct Record {
    const unsigned char *data = nullptr;
    uint32_t size = 0;
    uint64_t pos = 0, end = 0;
  };

  // Maps the ring buffer map `fd` of `bytes` data bytes; throws mt::Error.
  RingReader(int fd, uint32_t bytes);
  ~RingReader();
  RingReader(RingReader &&other) noexcept;
  RingReader(const RingReader &) = delete;
  RingReader &operator=(const RingReader &) = delete;
  RingReader &operator=(RingReader &&) = delete;

  // The next committed record past the read position (discarded ones are
  // skipped), or false when none is committed yet.
  bool peek(Record &record);
  // Moves the read position past the record peek() gave.
  void advance(const Record &record) { read_ = record.end; }
  uint64_t read_position() const { return read_; }
  // Lets the kernel reuse the ring up to `pos` (at most the read position).
  void release_to(uint64_t pos);
  // The position past the last record reserved so far.
  uint64_t produced() const;
  // Bytes committed or reserved past the read position.
  uint64_t unread() const { return produced() - read_; }

 private:
  void unmap();

  unsigned char *consumer_page_ = nullptr;  // consumer position, ours to write
  unsigned char *producer_page_ = nullptr;  // producer position, then the data pages
  const unsigned char *data_ = nullptr;
  size_t page_ = 0, mapped_ = 0;
  uint64_t mask_ = 0;
  uint64_t read_ = 0, released_ = 0;
  std::vector<unsigned char> wrapped_;  // the record that wraps, made whole
  uint64_t wrapped_pos_ = UINT64_MAX;   // where it begins
};

}  // namespace mt
