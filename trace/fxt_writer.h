// A streaming writer of the Fuchsia trace format (FXT) as Perfetto imports
// it: magic and initialization records, interned strings and thread refs in
// bounded tables, process and thread kernel objects, and events with at
// most 15 typed arguments. Nothing per event is allocated once the tables
// are warm; memory is bounded whatever the trace length. Strings longer
// than 32000 bytes are cut there (not inside a UTF-8 sequence); the empty
// string is ref 0. Names used on every event (a plan's category, name and
// argument names) can be pinned once (pin()): events that take an FxtRef
// then neither hash nor compare them. Events can also be built in place
// (start(), arg_*(), write()), without an FxtArg or a vector per event.
#pragma once
#include <bit>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/fxt_format.h"

namespace mt {

// A string pinned in one FxtWriter by pin(). It is interned on its first
// use and its index is then never evicted, so using it costs no hashing.
// id 0 is no string: an FxtArg then names itself by `name`.
struct FxtRef {
  uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
};

struct FxtArg {
  enum class Kind { Int, Uint, Pointer, String, Bool, Koid };
  std::string_view name;
  Kind kind = Kind::Uint;
  int64_t i = 0;
  uint64_t u = 0;  // Uint, Pointer, Koid, Bool
  std::string_view text{};
  FxtRef name_ref{};  // when set, the argument's name instead of `name`

  static FxtArg integer(std::string_view name, int64_t v);
  static FxtArg uinteger(std::string_view name, uint64_t v);
  static FxtArg pointer(std::string_view name, uint64_t v);
  static FxtArg string(std::string_view name, std::string_view v);
  static FxtArg boolean(std::string_view name, bool v);
  static FxtArg koid(std::string_view name, uint64_t v);
};

enum class FxtFlow { Begin, Step, End };

// The arguments of one event, encoded as they are added: see FxtWriter::start().
class FxtArgWords {
  friend class FxtWriter;
  uint64_t words_[2 * fxt::kMaxArgs] = {};
  uint32_t size_ = 0, count_ = 0;  // words, arguments
};

class FxtWriter {
 public:
  static constexpr size_t kMaxArgs = 15;

  // Writes the magic and the initialization record (timestamps in ns).
  explicit FxtWriter(std::FILE *out);

  // Names a process or a thread (a kernel object record; a thread names
  // its process, as Perfetto requires).
  void process(uint64_t pid, std::string_view name);
  void thread(uint64_t pid, uint64_t tid, std::string_view name);

  // Pins `s` (cut like every string): the same ref for the same string.
  // At most kMaxKept strings keep their index for good; refs pinned beyond
  // that still work, at the cost of an interning per use.
  FxtRef pin(std::string_view s);
  static constexpr size_t kMaxKept = 16384;  // of the 32767 indices

  // Events on the thread (pid, tid) at `ts` ns. Arguments beyond 15 are
  // dropped (and counted in dropped_args()).
  void instant(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
               std::string_view name, const std::vector<FxtArg> &args = {});
  void begin(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
             std::string_view name, const std::vector<FxtArg> &args = {});
  void end(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
           std::string_view name, const std::vector<FxtArg> &args = {});
  void complete(uint64_t pid, uint64_t tid, uint64_t ts, uint64_t end_ts, std::string_view category,
                std::string_view name, const std::vector<FxtArg> &args = {});
  // A counter track `name` of the process; each argument is one series.
  void counter(uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
               std::string_view name, uint64_t counter_id, const std::vector<FxtArg> &args);
  // A flow point, bound by Perfetto to the innermost slice open on the thread.
  void flow(FxtFlow kind, uint64_t pid, uint64_t tid, uint64_t ts, std::string_view category,
            std::string_view name, uint64_t flow_id);
  // The same, with pinned category and name.
  void instant(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
               const std::vector<FxtArg> &args = {});
  void begin(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
             const std::vector<FxtArg> &args = {});
  void end(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
           const std::vector<FxtArg> &args = {});
  void complete(uint64_t pid, uint64_t tid, uint64_t ts, uint64_t end_ts, FxtRef category,
                FxtRef name, const std::vector<FxtArg> &args = {});
  void counter(uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
               uint64_t counter_id, const std::vector<FxtArg> &args);
  void flow(FxtFlow kind, uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
            uint64_t flow_id);

  // An event built in place: start() opens it (what its arguments intern
  // is kept until it is written), arg_*() add arguments (beyond 15 they
  // are dropped and counted), write() writes it with `extra` (end time,
  // counter or flow id) if not null. Integers that fit 32 bits take one
  // word (int32, uint32), as Perfetto reads either.
  void start(FxtArgWords &a) {
    serial_++;
    a.size_ = a.count_ = 0;
  }
  void arg_int(FxtArgWords &a, FxtRef name, int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX)
      put(a, name, fxt::kArgInt32 | uint64_t(uint32_t(int32_t(v))) << 32);
    else
      put_wide(a, name, fxt::kArgInt64, uint64_t(v));
  }
  void arg_uint(FxtArgWords &a, FxtRef name, uint64_t v) {
    if (v <= UINT32_MAX)
      put(a, name, fxt::kArgUint32 | v << 32);
    else
      put_wide(a, name, fxt::kArgUint64, v);
  }
  void arg_pointer(FxtArgWords &a, FxtRef name, uint64_t v) {
    put_wide(a, name, fxt::kArgPointer, v);
  }
  void arg_bool(FxtArgWords &a, FxtRef name, bool v) {
    put(a, name, fxt::kArgBool | uint64_t(v) << 32);
  }
  void arg_string(FxtArgWords &a, FxtRef name, std::string_view v) {
    if (a.count_ < fxt::kMaxArgs)
      put(a, name, fxt::kArgString | string_ref(v) << 32);
    else
      dropped_args_++;
  }
  void arg_string(FxtArgWords &a, FxtRef name, FxtRef v) {
    put(a, name, fxt::kArgString | pinned_ref(v.id) << 32);
  }
  void write(int type, uint64_t pid, uint64_t tid, uint64_t ts, FxtRef category, FxtRef name,
             const FxtArgWords &a, const uint64_t *extra) {
    write(type, thread(pid, tid), ts, category, name, a, extra);
  }
  // The thread (pid, tid), for events on it written next: it holds until
  // another thread is named by the writer's events.
  struct Thread {
    uint64_t ref;
  };
  Thread thread(uint64_t pid, uint64_t tid) { return {thread_ref(pid, tid)}; }
  void write(int type, Thread thread, uint64_t ts, FxtRef category, FxtRef name,
             const FxtArgWords &a, const uint64_t *extra) {
    emit(type, thread.ref, ts, pinned_ref(category.id), pinned_ref(name.id), a, extra);
  }
  // An event without arguments and with `extra` (a flow point), on its own.
  void write(int type, Thread thread, uint64_t ts, FxtRef category, FxtRef name, uint64_t extra) {
    serial_++;
    uint64_t cat = pinned_ref(category.id);
    uint64_t n = pinned_ref(name.id);
    uint64_t *w = reserve(3);
    w[0] = le(fxt::kEventRecord | 3 << 4 | uint64_t(type) << 16 | thread.ref << 24 | cat << 32 |
              n << 48);
    w[1] = le(ts);
    w[2] = le(extra);
  }

  // Writes the buffered bytes and fflush()es the file.
  void flush();
  // Every byte emitted, buffered or not, and every record, the magic included.
  uint64_t bytes() const { return bytes_ + used_ * 8; }
  uint64_t records() const { return records_ + buffered_records_; }
  uint64_t dropped_args() const { return dropped_args_; }
  // The first write error (an errno; 0: none), and the records written
  // before it (accepted by the FILE, which should be unbuffered).
  int error() const { return error_; }
  uint64_t records_written() const { return records_written_; }
  // The records wholly within the first `bytes` bytes written (known for
  // the last kBoundaries buffers; 0 before them): what reached a file
  // that took only that much.
  uint64_t records_within(uint64_t bytes) const;

  // Writes what is still buffered (without fflush) unless flush() came last;
  // the FILE stays open and belongs to the caller.
  ~FxtWriter();
  FxtWriter(const FxtWriter &) = delete;
  FxtWriter &operator=(const FxtWriter &) = delete;

 private:
  struct StringTable;  // interned strings, indices 1..32767, clock eviction
  struct ThreadTable;  // (pid, tid) refs, indices 1..255, clock eviction
  static constexpr size_t kBufferWords = 8192;  // 64 KiB
  static constexpr size_t kCopiedArgWords = 12;

  // A string given either way: pinned (pin != 0) or by its text.
  struct Str {
    std::string_view text;
    uint32_t pin = 0;
  };
  struct Pin {
    std::string text;
    uint32_t idx = 0;  // its kept index, once used; 0 before, or beyond kMaxKept
  };

  uint64_t string_ref(std::string_view s);
  uint64_t string_ref(Str s) { return s.pin ? pinned_ref(s.pin) : string_ref(s.text); }
  uint64_t pinned_ref(uint32_t pin) {
    uint32_t idx = pins_[pin].idx;
    return idx ? idx : first_pinned_ref(pin);
  }
  uint64_t first_pinned_ref(uint32_t pin);
  uint64_t find_string_ref(std::string_view s);
  uint64_t thread_ref(uint64_t pid, uint64_t tid);
  uint64_t find_thread_ref(uint64_t pid, uint64_t tid);
  static uint64_t le(uint64_t w) {
    if constexpr (std::endian::native == std::endian::little)
      return w;
    else
      return __builtin_bswap64(w);
  }
  // An argument of one word (`head` holds its type and value), or of two.
  void put(FxtArgWords &a, FxtRef name, uint64_t head) {
    if (a.count_ == fxt::kMaxArgs) {
      dropped_args_++;
      return;
    }
    a.words_[a.size_++] = le(head | 1 << 4 | pinned_ref(name.id) << 16);
    a.count_++;
  }
  void put_wide(FxtArgWords &a, FxtRef name, uint64_t type, uint64_t value) {
    if (a.count_ == fxt::kMaxArgs) {
      dropped_args_++;
      return;
    }
    a.words_[a.size_] = le(type | 2 << 4 | pinned_ref(name.id) << 16);
    a.words_[a.size_ + 1] = le(value);
    a.size_ += 2;
    a.count_++;
  }
  void event(uint64_t type, uint64_t pid, uint64_t tid, uint64_t ts, Str category, Str name,
             const std::vector<FxtArg> &args, const uint64_t *extra);
  void emit(uint64_t type, uint64_t thread, uint64_t ts, uint64_t category, uint64_t name,
            const FxtArgWords &a, const uint64_t *extra) {
    size_t words = 2 + a.size_ + (extra ? 1 : 0);
    uint64_t *w = reserve(words);
    w[0] = le(fxt::kEventRecord | uint64_t(words) << 4 | type << 16 | uint64_t(a.count_) << 20 |
              thread << 24 | category << 32 | name << 48);
    w[1] = le(ts);
    // Most events have few arguments: copied as a block of fixed size (the
    // buffer has room beyond its end for it), without a call.
    std::memcpy(w + 2, a.words_, kCopiedArgWords * 8);
    if (a.size_ > kCopiedArgWords) [[unlikely]]
      std::memcpy(w + 2 + kCopiedArgWords, a.words_ + kCopiedArgWords,
                  (a.size_ - kCopiedArgWords) * 8);
    if (extra)
      w[2 + a.size_] = le(*extra);
  }
  // Room for one record, counted in bytes() and records().
  uint64_t *reserve(size_t words) {
    if (used_ + words > kBufferWords) [[unlikely]]
      write_buffer();
    uint64_t *w = buf_.get() + used_;
    used_ += words;
    buffered_records_++;
    return w;
  }
  void write_buffer();

  std::FILE *out_;
  std::unique_ptr<uint64_t[]> buf_;
  size_t used_ = 0;      // words in buf_
  uint64_t serial_ = 0;  // the record being built: its strings must not be evicted
  std::unique_ptr<StringTable> strings_;
  std::unique_ptr<ThreadTable> threads_;
  std::vector<Pin> pins_;  // by FxtRef id; [0] unused
  std::unordered_map<std::string, uint32_t> pin_ids_;
  size_t kept_ = 0;  // pins with a kept index
  // Refs found lately, each with its slot's generation, to tell whether it
  // was evicted since: records come from a few threads at a time, and with
  // a few short strings.
  struct RecentThread {
    uint64_t pid = 0, tid = 0;
    uint32_t idx = 0, generation = 0;
  };
  static constexpr size_t kRecentThreads = 4;
  RecentThread recent_threads_[kRecentThreads] = {};
  size_t next_recent_thread_ = 0;
  struct RecentString {
    uint64_t text[2];
    uint32_t size, idx, generation;
  };
  static constexpr unsigned kRecentStringsBits = 8;
  RecentString recent_strings_[1 << kRecentStringsBits] = {};
  uint64_t bytes_ = 0, records_ = 0;  // those of buffers handed to the file
  uint64_t dropped_args_ = 0;
  uint64_t buffered_records_ = 0, records_written_ = 0;
  // (bytes, records) written when each of the last buffers ended, a ring.
  static constexpr size_t kBoundaries = 64;
  std::pair<uint64_t, uint64_t> boundaries_[kBoundaries] = {};
  size_t boundary_count_ = 0;
  int error_ = 0;
};

}  // namespace mt
