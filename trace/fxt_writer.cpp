// The FXT writer. Records are built straight into a 64 KiB word buffer;
// strings and threads are interned in fixed tables (open addressing over
// small index arrays, clock eviction), so a warm writer neither allocates
// nor builds a std::string per event.
#include "trace/fxt_writer.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <functional>

#include "trace/fxt_format.h"

namespace mt {

FxtArg FxtArg::integer(std::string_view name, int64_t v) {
  return {.name = name, .kind = Kind::Int, .i = v};
}
FxtArg FxtArg::uinteger(std::string_view name, uint64_t v) {
  return {.name = name, .kind = Kind::Uint, .u = v};
}
FxtArg FxtArg::pointer(std::string_view name, uint64_t v) {
  return {.name = name, .kind = Kind::Pointer, .u = v};
}
FxtArg FxtArg::string(std::string_view name, std::string_view v) {
  return {.name = name, .kind = Kind::String, .text = v};
}
FxtArg FxtArg::boolean(std::string_view name, bool v) {
  return {.name = name, .kind = Kind::Bool, .u = v ? 1u : 0u};
}
FxtArg FxtArg::koid(std::string_view name, uint64_t v) {
  return {.name = name, .kind = Kind::Koid, .u = v};
}

namespace {

using namespace fxt;
constexpr uint64_t kTicksPerSecond = 1000000000ull;
constexpr size_t kMaxStringBytes = 32000;

inline uint64_t header(uint64_t type, size_t words) {
  return type | (uint64_t(words) << 4);
}

inline uint64_t mix64(uint64_t x) {  // murmur3's finalizer
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb3f99e3b97c7ull;
  return x ^ (x >> 33);
}

// Up to 16 bytes as two words, loaded without a call: together with the
// size, different texts give different words.
void short_text(std::string_view s, uint64_t text[2]) {
  const char *p = s.data();
  size_t n = s.size();
  auto load = [](const char *at, size_t bytes) {
    uint64_t v = 0;
    std::memcpy(&v, at, bytes);
    return v;
  };
  if (n >= 8) {
    text[0] = load(p, 8);
    text[1] = load(p + n - 8, 8);
  } else if (n >= 4) {
    text[0] = load(p, 4);
    text[1] = load(p + n - 4, 4);
  } else {
    text[0] = load(p, 1) | load(p + n / 2, 1) << 8 | load(p + n - 1, 1) << 16;
    text[1] = 0;
  }
}

// A string cut to at most kMaxStringBytes, not inside a UTF-8 sequence.
std::string_view clip(std::string_view s) {
  if (s.size() <= kMaxStringBytes) {
    return s;
  }
  size_t n = kMaxStringBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) {
    n--;
  }
  return s.substr(0, n);
}

// A bounded map from keys to indices 1..kSlots. Slots are found through an
// open-addressed (linear probing) array of slot indices twice as large,
// with backward-shift deletion, so nothing is allocated once keys are
// stored. When every index is taken, a clock hand picks the victim: a slot
// found again since the hand last passed gets a second chance (a new slot
// has none yet, so a stream of one-off strings cannot flush out the hot
// ones), and neither a slot used by the record being built (pinned ==
// serial) nor a kept one is ever taken.
template <class Key, uint32_t kSlots, uint32_t kIndexSize>
class ClockTable {
 public:
  struct Slot {
    Key key{};
    uint64_t hash = 0;
    uint64_t pinned = 0;
    bool used = false;
    bool kept = false;        // never evicted
    uint32_t generation = 0;  // counts the keys it has held
  };

  // Slots are made as keys come: a run that writes a few hundred strings
  // never touches the megabytes a full table takes (start-up, issue 18).
  ClockTable() : slots_(std::min<uint32_t>(kSlots, 255) + 1), index_(kIndexSize, 0) {}

  // The index of `key`, and whether it was (re)assigned just now, in which
  // case the caller must emit its definition record before using it.
  template <class Lookup, class Eq, class Assign>
  uint32_t find_or_assign(const Lookup &key, uint64_t hash, uint64_t serial, bool *fresh, Eq eq,
                          Assign assign) {
    size_t pos = hash & kMask;
    while (uint32_t idx = index_[pos]) {
      Slot &s = slots_[idx];
      if (s.hash == hash && eq(s.key, key)) {
        s.used = true;
        s.pinned = serial;
        *fresh = false;
        return idx;
      }
      pos = (pos + 1) & kMask;
    }
    uint32_t idx;
    if (count_ < kSlots) {
      idx = ++count_;
      if (idx >= slots_.size())
        slots_.resize(std::min<size_t>(slots_.size() * 2, kSlots + 1));
    } else {
      idx = evict(serial);
      // Deletion may have shifted entries: probe again for a free place.
      pos = hash & kMask;
      while (index_[pos]) {
        pos = (pos + 1) & kMask;
      }
    }
    Slot &s = slots_[idx];
    assign(s.key, key);
    s.generation++;
    s.hash = hash;
    s.used = false;  // earns its second chance when used again
    s.pinned = serial;
    index_[pos] = idx;
    *fresh = true;
    return idx;
  }

  const Key &key(uint32_t idx) const { return slots_[idx].key; }
  uint32_t generation(uint32_t idx) const { return slots_[idx].generation; }
  // Whether `idx` still holds the key it held at `generation`; if so it is
  // found again, as by find_or_assign. Callers that remember (key, index,
  // generation) so skip hashing and probing.
  bool refind(uint32_t idx, uint32_t generation, uint64_t serial) {
    Slot &s = slots_[idx];
    if (s.generation != generation)
      return false;
    s.used = true;
    s.pinned = serial;
    return true;
  }
  // The caller keeps fewer than kSlots indices, so eviction finds a victim.
  void keep(uint32_t idx) { slots_[idx].kept = true; }

 private:
  static constexpr size_t kMask = kIndexSize - 1;
  static_assert((kIndexSize & kMask) == 0 && kIndexSize >= 2 * kSlots);

  uint32_t evict(uint64_t serial) {
    for (;;) {
      hand_ = hand_ % kSlots + 1;
      Slot &s = slots_[hand_];
      if (s.pinned == serial || s.kept) {
        continue;
      }
      if (s.used) {
        s.used = false;
        continue;
      }
      erase(hand_);
      return hand_;
    }
  }

  void erase(uint32_t idx) {
    size_t i = slots_[idx].hash & kMask;
    while (index_[i] != idx) {
      i = (i + 1) & kMask;
    }
    // Backward shift: move up every later entry of the run whose home is
    // not within (i, j], so that no probe sequence meets a hole.
    for (size_t j = (i + 1) & kMask; index_[j]; j = (j + 1) & kMask) {
      size_t home = slots_[index_[j]].hash & kMask;
      if (((j - home) & kMask) >= ((j - i) & kMask)) {
        index_[i] = index_[j];
        i = j;
      }
    }
    index_[i] = 0;
  }

  std::vector<Slot> slots_;  // [0] unused
  std::vector<uint16_t> index_;
  uint32_t count_ = 0;
  uint32_t hand_ = 0;
};

struct ThreadKey {
  uint64_t pid = 0, tid = 0;
};

}  // namespace

struct FxtWriter::StringTable : ClockTable<std::string, 32767, 65536> {};
struct FxtWriter::ThreadTable : ClockTable<ThreadKey, 255, 512> {};
// Room to evict whatever one record (at most 2 + 2 * kMaxArgs strings) needs.
static_assert(FxtWriter::kMaxKept + 2 + 2 * FxtWriter::kMaxArgs < 32767);

FxtWriter::FxtWriter(std::FILE *out)
    : out_(out),
      buf_(new uint64_t[kBufferWords + kCopiedArgWords]),
      strings_(new StringTable),
      threads_(new ThreadTable),
      pins_(1) {
  uint64_t *w = reserve(1);
  w[0] = le(kMagic);
  w = reserve(2);
  w[0] = le(header(kInitRecord, 2));
  w[1] = le(kTicksPerSecond);
}

FxtWriter::~FxtWriter() {
  if (used_ > 0) {
    write_buffer();
  }
}

void FxtWriter::write_buffer() {
  // After the first error nothing more is written: the file stays whole up
  // to the last buffer that reached it.
  bytes_ += used_ * 8;
  records_ += buffered_records_;
  if (used_ > 0 && out_ && !error_) {
    errno = 0;
    // ferror() too: a cookie stream (gzip) may report a short write only so.
    if (std::fwrite(buf_.get(), 8, used_, out_) == used_ && !std::ferror(out_)) {
      records_written_ += buffered_records_;
      boundaries_[boundary_count_++ % kBoundaries] = {bytes_, records_written_};
    } else {
      error_ = errno ? errno : EIO;
    }
  }
  used_ = 0;
  buffered_records_ = 0;
}

uint64_t FxtWriter::records_within(uint64_t bytes) const {
  size_t known = std::min(boundary_count_, kBoundaries);
  for (size_t i = 1; i <= known; i++) {
    const auto &[end, records] = boundaries_[(boundary_count_ - i) % kBoundaries];
    if (end <= bytes)
      return records;
  }
  return 0;
}

void FxtWriter::flush() {
  write_buffer();
  if (out_ && !error_) {
    errno = 0;
    if (std::fflush(out_) != 0 || std::ferror(out_))
      error_ = errno ? errno : EIO;
  }
}

uint64_t FxtWriter::string_ref(std::string_view s) {
  if (s.empty()) {
    return 0;
  }
  // Short strings (names of operations, say) recur: the last one met at
  // each place of a small table answers without hashing the text.
  if (s.size() <= 16) {
    uint64_t text[2];
    short_text(s, text);
    uint64_t h = (text[0] ^ s.size()) * 0x9e3779b97f4a7c15ull ^ text[1] * 0xff51afd7ed558ccdull;
    RecentString &r = recent_strings_[h >> (64 - kRecentStringsBits)];
    if (r.text[0] == text[0] && r.text[1] == text[1] && r.size == s.size() && r.idx &&
        strings_->refind(r.idx, r.generation, serial_)) {
      return r.idx;
    }
    uint32_t idx = static_cast<uint32_t>(find_string_ref(s));
    r = {{text[0], text[1]}, static_cast<uint32_t>(s.size()), idx, strings_->generation(idx)};
    return idx;
  }
  return find_string_ref(clip(s));
}

uint64_t FxtWriter::find_string_ref(std::string_view s) {
  bool fresh;
  uint64_t hash = std::hash<std::string_view>{}(s);
  uint32_t idx = strings_->find_or_assign(
      s, hash, serial_, &fresh,
      [](const std::string &a, std::string_view b) { return std::string_view(a) == b; },
      [](std::string &a, std::string_view b) { a.assign(b); });
  if (fresh) {
    size_t payload = (s.size() + 7) / 8;
    uint64_t *w = reserve(1 + payload);
    w[0] = le(header(kStringRecord, 1 + payload) | uint64_t(idx) << 16 | uint64_t(s.size()) << 32);
    w[payload] = 0;  // the padding
    std::memcpy(w + 1, s.data(), s.size());
  }
  return idx;
}

FxtRef FxtWriter::pin(std::string_view s) {
  s = clip(s);
  auto [known, fresh] = pin_ids_.try_emplace(std::string(s), static_cast<uint32_t>(pins_.size()));
  if (fresh) {
    pins_.push_back({known->first, 0});
  }
  return {known->second};
}

// A pin's first use (or any use of an empty one, or of one beyond
// kMaxKept): interned as any string, then kept if there is room.
uint64_t FxtWriter::first_pinned_ref(uint32_t pin) {
  Pin &p = pins_[pin];
  uint64_t idx = string_ref(std::string_view(p.text));
  if (idx && kept_ < kMaxKept) {
    strings_->keep(static_cast<uint32_t>(idx));
    p.idx = static_cast<uint32_t>(idx);
    kept_++;
  }
  return idx;
}

uint64_t FxtWriter::find_thread_ref(uint64_t pid, uint64_t tid) {
  bool fresh;
  ThreadKey key{pid, tid};
  uint32_t idx = threads_->find_or_assign(
      key, mix64(pid * 0x9e3779b97f4a7c15ull ^ tid), serial_, &fresh,
      [](const ThreadKey &a, const ThreadKey &b) { return a.pid == b.pid && a.tid == b.tid; },
      [](ThreadKey &a, const ThreadKey &b) { a = b; });
  if (fresh) {
    uint64_t *w = reserve(3);
    w[0] = le(header(kThreadRecord, 3) | uint64_t(idx) << 16);
    w[1] = le(pid);
    w[2] = le(tid);
  }
  recent_threads_[next_recent_thread_++ % kRecentThreads] = {pid, tid, idx,
                                                             threads_->generation(idx)};
  return idx;
}

uint64_t FxtWriter::thread_ref(uint64_t pid, uint64_t tid) {
  for (const RecentThread &t : recent_threads_)
    if (t.tid == tid && t.pid == pid && t.idx && threads_->refind(t.idx, t.generation, serial_))
      return t.idx;
  return find_thread_ref(pid, tid);
}

void FxtWriter::process(uint64_t pid, std::string_view name) {
  serial_++;
  uint64_t name_ref = string_ref(name);
  uint64_t *w = reserve(2);
  w[0] = le(header(kKernelObjectRecord, 2) | kObjProcess << 16 | name_ref << 24);
  w[1] = le(pid);
}

void FxtWriter::thread(uint64_t pid, uint64_t tid, std::string_view name) {
  serial_++;
  uint64_t name_ref = string_ref(name);
  uint64_t process_ref = string_ref("process");
  uint64_t *w = reserve(4);
  w[0] = le(header(kKernelObjectRecord, 4) | kObjThread << 16 | name_ref << 24 | uint64_t(1) << 40);
  w[1] = le(tid);
  w[2] = le(header(kArgKoid, 2) | process_ref << 16);
  w[3] = le(pid);
}

void FxtWriter::event(uint64_t type, uint64_t pid, uint64_t tid, uint64_t ts, Str category,
                      Str name, const std::vector<FxtArg> &args, const uint64_t *extra) {
  // Intern everything first: string and thread records must precede the
  // event, and the event is then written in one piece.
  FxtArgWords a;
  start(a);
  for (const FxtArg &arg : args) {
    if (a.count_ == kMaxArgs) {
      dropped_args_ += args.size() - kMaxArgs;
      break;
    }
    FxtRef n = arg.name_ref;
    // An unpinned name: interned as it is (the head's name bits take it).
    uint64_t named = n ? 0 : string_ref(arg.name) << 16;
    size_t at = a.size_;
    switch (arg.kind) {
      case FxtArg::Kind::Int: arg_int(a, n, arg.i); break;
      case FxtArg::Kind::Uint: arg_uint(a, n, arg.u); break;
      case FxtArg::Kind::Pointer: arg_pointer(a, n, arg.u); break;
      case FxtArg::Kind::Koid: put_wide(a, n, kArgKoid, arg.u); break;
      case FxtArg::Kind::String: arg_string(a, n, arg.text); break;
      case FxtArg::Kind::Bool: arg_bool(a, n, arg.u != 0); break;
    }
    a.words_[at] |= le(named);
  }
  uint64_t cat_ref = string_ref(category);
  uint64_t name_ref = string_ref(name);
  emit(type, thread_ref(pid, tid), ts, cat_ref, name_ref, a, extra);
}

void FxtWriter::instant(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
                        std::string_view name, const std::vector<FxtArg> &args) {
  event(kInstant, pid, tid, ts, {category}, {name}, args, nullptr);
}

void FxtWriter::begin(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
                      std::string_view name, const std::vector<FxtArg> &args) {
  event(kBegin, pid, tid, ts, {category}, {name}, args, nullptr);
}

void FxtWriter::end(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
                    std::string_view name, const std::vector<FxtArg> &args) {
  event(kEnd, pid, tid, ts, {category}, {name}, args, nullptr);
}

void FxtWriter::complete(uint64_t pid, uint64_t tid, uint64_t ts, uint64_t end_ts,
                         std::string_view category, std::string_view name,
                         const std::vector<FxtArg> &args) {
  event(kComplete, pid, tid, ts, {category}, {name}, args, &end_ts);
}

void FxtWriter::counter(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
                        std::string_view name, uint64_t counter_id,
                        const std::vector<FxtArg> &args) {
  event(kCounter, pid, tid, ts, {category}, {name}, args, &counter_id);
}

namespace {

uint64_t flow_type(FxtFlow kind) {
  return kind == FxtFlow::Begin ? kFlowBegin : kind == FxtFlow::Step ? kFlowStep : kFlowEnd;
}

const std::vector<FxtArg> kNoArgs;

}  // namespace

void FxtWriter::flow(FxtFlow kind, uint64_t pid, uint64_t tid, uint64_t ts,
                     std::string_view category, std::string_view name, uint64_t flow_id) {
  event(flow_type(kind), pid, tid, ts, {category}, {name}, kNoArgs, &flow_id);
}

void FxtWriter::instant(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
                        const std::vector<FxtArg> &args) {
  event(kInstant, pid, tid, ts, {{}, category.id}, {{}, name.id}, args, nullptr);
}

void FxtWriter::begin(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
                      const std::vector<FxtArg> &args) {
  event(kBegin, pid, tid, ts, {{}, category.id}, {{}, name.id}, args, nullptr);
}

void FxtWriter::end(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
                    const std::vector<FxtArg> &args) {
  event(kEnd, pid, tid, ts, {{}, category.id}, {{}, name.id}, args, nullptr);
}

void FxtWriter::complete(uint64_t pid, uint64_t tid, uint64_t ts, uint64_t end_ts, FxtRef category,
                         FxtRef name, const std::vector<FxtArg> &args) {
  event(kComplete, pid, tid, ts, {{}, category.id}, {{}, name.id}, args, &end_ts);
}

void FxtWriter::counter(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
                        uint64_t counter_id, const std::vector<FxtArg> &args) {
  event(kCounter, pid, tid, ts, {{}, category.id}, {{}, name.id}, args, &counter_id);
}

void FxtWriter::flow(FxtFlow kind, uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category,
                     FxtRef name, uint64_t flow_id) {
  event(flow_type(kind), pid, tid, ts, {{}, category.id}, {{}, name.id}, kNoArgs, &flow_id);
}

}  // namespace mt
