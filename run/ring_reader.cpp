// Maps one BPF ring buffer and peeks records in place, copying aside the one that wraps.
#include "run/ring_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "common/error.h"

namespace mt {

namespace {

// The kernel's record header (struct bpf_ringbuf_hdr): the length, with a
// bit while the record is being written and one when it was discarded.
constexpr uint32_t kBusyBit = 1u << 31;
constexpr uint32_t kDiscardBit = 1u << 30;
constexpr uint32_t kHeaderBytes = 8;

uint64_t load_acquire(const void *p) {
  return __atomic_load_n(static_cast<const uint64_t *>(p), __ATOMIC_ACQUIRE);
}

}  // namespace

RingReader::RingReader(int fd, uint32_t bytes) : page_(sysconf(_SC_PAGESIZE)), mask_(bytes - 1) {
  void *consumer = mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (consumer == MAP_FAILED)
    throw Error(std::string("cannot map a BPF ring buffer: ") + std::strerror(errno));
  consumer_page_ = static_cast<unsigned char *>(consumer);
  mapped_ = page_ + size_t(bytes);
  void *producer = mmap(nullptr, mapped_, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, page_);
  if (producer == MAP_FAILED) {
    int error = errno;
    unmap();
    throw Error(std::string("cannot map a BPF ring buffer: ") + std::strerror(error));
  }
  producer_page_ = static_cast<unsigned char *>(producer);
  data_ = producer_page_ + page_;
  read_ = released_ = load_acquire(consumer_page_);
}

RingReader::RingReader(RingReader &&other) noexcept
    : consumer_page_(other.consumer_page_),
      producer_page_(other.producer_page_),
      data_(other.data_),
      page_(other.page_),
      mapped_(other.mapped_),
      mask_(other.mask_),
      read_(other.read_),
      released_(other.released_),
      wrapped_(std::move(other.wrapped_)),
      wrapped_pos_(other.wrapped_pos_) {
  other.consumer_page_ = other.producer_page_ = nullptr;
}

RingReader::~RingReader() {
  unmap();
}

void RingReader::unmap() {
  if (producer_page_)
    munmap(producer_page_, mapped_);
  if (consumer_page_)
    munmap(consumer_page_, page_);
  producer_page_ = consumer_page_ = nullptr;
}

bool RingReader::peek(Record &record) {
  uint64_t produced = load_acquire(producer_page_);
  while (read_ < produced) {
    const unsigned char *header = data_ + (read_ & mask_);
    uint32_t len = __atomic_load_n(reinterpret_cast<const uint32_t *>(header), __ATOMIC_ACQUIRE);
    if (len & kBusyBit)
      return false;  // still being written: it and what follows wait
    uint32_t size = len & ~(kBusyBit | kDiscardBit);
    uint64_t end = read_ + ((size + kHeaderBytes + 7) & ~7ull);
    if (len & kDiscardBit) {
      read_ = end;
      continue;
    }
    record = {data_ + ((read_ + kHeaderBytes) & mask_), size, read_, end};
    uint64_t first = data_ + mask_ + 1 - record.data;
    if (size > first) {
      if (wrapped_pos_ != read_) {
        wrapped_.assign(record.data, record.data + first);
        wrapped_.insert(wrapped_.end(), data_, data_ + (size - first));
        wrapped_pos_ = read_;
      }
      record.data = wrapped_.data();
    }
    return true;
  }
  return false;
}

void RingReader::release_to(uint64_t pos) {
  if (pos > read_)
    pos = read_;
  if (pos <= released_)
    return;
  released_ = pos;
  __atomic_store_n(reinterpret_cast<uint64_t *>(consumer_page_), pos, __ATOMIC_RELEASE);
}

uint64_t RingReader::produced() const {
  return load_acquire(producer_page_);
}

}  // namespace mt
