// A streaming writer of the Fuchsia trace format (FXT) as Perfetto imports
// it: magic and initialization records, interned strings and thread refs in
// bounded tables, process and thread kernel objects, and events with at
// most 15 typed arguments. Nothing per event is allocated once the tables
// are warm; memory is bounded whatever the trace length. Strings longer
// than 32000 bytes are cut there (not inside a UTF-8 sequence); the empty
// string is ref 0. Names used on every event (a plan's category, name and
// argument names) can be pinned once (pin()): events that take an FxtRef
// then neither hash nor compare them.
#pragma once
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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

  // Writes the buffered bytes and fflush()es the file.
  void flush();
  uint64_t bytes() const { return bytes_; }      // every byte emitted, buffered or not
  uint64_t records() const { return records_; }  // every record, the magic included
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
  uint64_t thread_ref(uint64_t pid, uint64_t tid);
  void event(uint64_t type, uint64_t pid, uint64_t tid, uint64_t ts, Str category, Str name,
             const std::vector<FxtArg> &args, const uint64_t *extra);
  uint64_t *reserve(size_t words);  // room for one record, counted in bytes_ and records_
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
  uint64_t bytes_ = 0, records_ = 0, dropped_args_ = 0;
  uint64_t buffered_records_ = 0, records_written_ = 0;
  // (bytes, records) written when each of the last buffers ended, a ring.
  static constexpr size_t kBoundaries = 64;
  std::pair<uint64_t, uint64_t> boundaries_[kBoundaries] = {};
  size_t boundary_count_ = 0;
  int error_ = 0;
};

}  // namespace mt
