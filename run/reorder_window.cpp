// Holds per-CPU records in place and releases them in timestamp order up to a watermark.
#include "run/reorder_window.h"

#include <algorithm>

namespace mt {

ReorderWindow::ReorderWindow(size_t sources, size_t aside_bytes)
    : queues_(sources), aside_limit_(aside_bytes) {
  // Small at first (a start touches no more than it needs); a queue
  // doubles when full.
  for (Queue &q : queues_)
    q.slots.resize(1024);
}

void ReorderWindow::Queue::push(const Held &h) {
  if (count == slots.size()) {
    // Full: unroll into a queue twice the size.
    std::vector<Held> grown(slots.size() * 2);
    for (size_t i = 0; i < count; i++)
      grown[i] = slots[(head + i) & (slots.size() - 1)];
    slots.swap(grown);
    head = 0;
  }
  slots[(head + count++) & (slots.size() - 1)] = h;
  last_ts = h.ts;
}

bool ReorderWindow::hold(size_t source, uint64_t ts, const unsigned char *data, uint32_t size,
                         uint64_t pos) {
  if (ts < released_ts_)
    return false;  // its turn has passed
  Queue &q = queues_[source];
  if (q.count == 0 || ts >= q.last_ts) {
    q.push({ts, data, size, pos});
    return true;
  }
  if (aside_bytes_.size() + size > aside_limit_)
    return false;
  aside_.push({ts, aside_seq_++, aside_bytes_.size(), size});
  aside_bytes_.insert(aside_bytes_.end(), data, data + size);
  return true;
}

void ReorderWindow::release(uint64_t watermark, const Draw &draw) {
  for (;;) {
    // The source with the oldest record (the first such on a tie), and the
    // time up to which it may go on alone: the next oldest of any other
    // source, which it may reach only if that source comes after it.
    size_t none = queues_.size(), oldest = none, next = none;
    uint64_t oldest_ts = watermark, next_ts = watermark;
    for (size_t s = 0; s < queues_.size(); s++) {
      if (!queues_[s].count)
        continue;
      uint64_t ts = queues_[s].front().ts;
      if (ts < oldest_ts) {
        next_ts = oldest_ts, next = oldest;
        oldest_ts = ts, oldest = s;
      } else if (ts < next_ts) {
        next_ts = ts, next = s;
      }
    }
    bool reach_next = next != none && next > oldest;
    if (!aside_.empty() && aside_.top().ts <= oldest_ts && aside_.top().ts < watermark) {
      const Aside a = aside_.top();
      aside_.pop();
      released_ts_ = std::max(released_ts_, a.ts);
      draw(aside_bytes_.data() + a.offset, a.size);
      if (aside_.empty())
        aside_bytes_.clear();
      continue;
    }
    if (oldest == none)
      return;
    if (!aside_.empty() && aside_.top().ts <= next_ts) {
      next_ts = aside_.top().ts;
      reach_next = false;
    }
    Queue &q = queues_[oldest];
    while (q.count && (q.front().ts < next_ts || (reach_next && q.front().ts == next_ts))) {
      const Held h = q.front();
      q.pop();
      released_ts_ = std::max(released_ts_, h.ts);
      draw(h.data, h.size);
    }
  }
}

std::optional<uint64_t> ReorderWindow::oldest_position(size_t source) const {
  const Queue &q = queues_[source];
  if (!q.count)
    return std::nullopt;
  return q.front().pos;
}

size_t ReorderWindow::held() const {
  size_t n = aside_.size();
  for (const Queue &q : queues_)
    n += q.count;
  return n;
}

}  // namespace mt
