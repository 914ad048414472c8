// Records from several sources (one per CPU), each source nearly in time
// order, handed on in time order. A record stays where its source keeps it
// (in the CPU's ring buffer) until it is released, so the window costs no
// copy and its size is bounded by the rings; only a record older than its
// source's previous one (a program that ran nested, in an interrupt, on the
// same CPU) is copied aside, into room of a fixed size.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

namespace mt {

class ReorderWindow {
 public:
  using Draw = std::function<void(const unsigned char *data, uint32_t size)>;

  explicit ReorderWindow(size_t sources, size_t aside_bytes = 4 << 20);

  // Holds a record of `source` found at ring position `pos`; its bytes
  // must stay valid until it is released. False when it is given up: it
  // is older than a record already released, or there is no room aside.
  bool hold(size_t source, uint64_t ts, const unsigned char *data, uint32_t size, uint64_t pos);
  // Hands every held record older than `watermark` to `draw`, oldest
  // first (records of equal time in the order they were held).
  void release(uint64_t watermark, const Draw &draw);
  // The ring position of the oldest record of `source` held in place: the
  // ring may be reused up to there.
  std::optional<uint64_t> oldest_position(size_t source) const;
  size_t held() const;

 private:
  struct Held {
    uint64_t ts;
    const unsigned char *data;
    uint32_t size;
    uint64_t pos;
  };
  // A source's records in place, oldest first: a growable circular queue.
  struct Queue {
    std::vector<Held> slots;
    size_t head = 0, count = 0;
    uint64_t last_ts = 0;
    const Held &front() const { return slots[head]; }
    void pop() { head = (head + 1) & (slots.size() - 1), count--; }
    void push(const Held &h);
  };
  struct Aside {
    uint64_t ts, seq;
    size_t offset;
    uint32_t size;
    bool operator>(const Aside &o) const { return ts != o.ts ? ts > o.ts : seq > o.seq; }
  };

  std::vector<Queue> queues_;
  std::priority_queue<Aside, std::vector<Aside>, std::greater<>> aside_;
  std::vector<unsigned char> aside_bytes_;
  size_t aside_limit_;
  uint64_t aside_seq_ = 0;
  uint64_t released_ts_ = 0;  // the time of the last record released
};

}  // namespace mt
