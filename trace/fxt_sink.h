// Draws the events a script declared with draw={...} into an FXT trace,
// natively: no Lua runs per event. Processes and threads are named from
// /proc when first seen; a track keyed by a value (one per ring, say) is a
// thread of its own under the event's process.
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/c_generator.h"
#include "common/declaration.h"
#include "output/output_file.h"
#include "run/record_decoder.h"
#include "trace/fxt_writer.h"
#include "trace/gzip_file.h"
#include "trace/open_flows.h"
#include "trace/slice_nesting.h"

namespace mt {

class FxtSink {
 public:
  // Writes to `file` (gzipped if its name ends in .gz); commit() puts it
  // in place once tracing has begun (see output_file.h).
  explicit FxtSink(OutputFile file);
  // The same for a path, in place at once; throws mt::Error if it cannot.
  explicit FxtSink(const std::string &path);
  ~FxtSink();
  FxtSink(const FxtSink &) = delete;
  FxtSink &operator=(const FxtSink &) = delete;

  // Resolves each probe's draw specs against its record layout.
  void plan(const Declaration &decl, const GeneratedProgram &generated,
            const std::vector<std::optional<RecordLayout>> &layouts);
  bool draws(uint32_t probe) const { return probe < plans_.size() && !plans_[probe].empty(); }
  // Draws one record of `probe` (at least its layout's size): THE entry
  // point for records, which must come in time order (equal times keep the
  // order given). Records of other sizes are ignored.
  void draw(uint32_t probe, const unsigned char *bytes, size_t size);
  // A record of `probe` has arrived, to be drawn later (by draw(), once in
  // time order): learns its thread's name from /proc now, while the thread
  // most likely still exists. Returns the record's time, by which it is to
  // be drawn, or UINT64_MAX when it is not a record of its layout.
  uint64_t arrived(uint32_t probe, const void *data, size_t size);
  // A struct mt_thread_name record: a thread's name, as it changed.
  void thread_named(const void *data, size_t size);
  // Records lost so far, as a counter track of moontrace's own process.
  void lost(uint64_t ts, uint64_t total);
  void flush() { writer_->flush(); }
  void commit() { out_.commit(); }
  // Writes what is buffered and closes the file (a gzip stream is then
  // finished); error() tells whether that or any write failed.
  void close();
  // The first write error (an errno), 0 if none.
  int error() const;
  // "cannot write PATH: REASON (N of M records reached it)".
  std::string failure() const;

  const std::string &path() const { return path_; }
  uint64_t bytes() const { return writer_->bytes(); }
  uint64_t events() const { return events_; }
  uint64_t orphan_flow_points() const { return orphan_flow_points_; }
  // Slices drawn in async lanes because they overlapped others on their track.
  uint64_t lane_slices() const { return lane_slices_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;  // no such field
  struct Plan {
    DrawDecl::Kind kind;
    std::string name, category, track_name;  // track_name "": the process's own track
    DrawDecl::Flow flow_point;
    bool async = false;  // a slice in a lane of the process's async track
    bool process_track = false;
    // A keyed track's label (its value names the track: a string or a
    // number), and the synthetic process of its group (0: none).
    uint32_t label_at = UINT32_MAX, label_size = 0;
    bool label_is_string = false;
    uint64_t group_pid = 0;
    // Offsets of the hidden fields it uses; when_at: drawn only where this
    // byte is not 0.
    uint32_t duration_at = kNone, track_at = kNone, flow_at = kNone, when_at = kNone;
    // Pinned in the writer once: no event hashes these strings.
    FxtRef category_ref{}, name_ref{};
    // How to read and write each argument, worked out once.
    struct Arg {
      // How it is read: the common cases without a test of its kind or size.
      enum class Op : uint8_t {
        U8,
        U16,
        U32,
        U64,
        S8,
        S16,
        S32,
        S64,
        Pointer,
        Bool,
        String,
        Other
      };
      Op op;
      uint32_t offset, size;
      FieldKind kind;
      FxtRef name;
      std::vector<FxtRef> value_names{};  // pinned names of its values (id 0: none)
      std::string stack_map{};            // a stack's map (FieldKind::Stack)
      bool cgroup_path = false;           // a cgroup id shown as its path
    };
    std::vector<Arg> args{};
  };
  void write_args(const Plan &p, const unsigned char *bytes);
  void write_arg(const Plan::Arg &a, const unsigned char *bytes);
  bool write_changed_args(const Plan &p, FxtRef counter, uint64_t pid, const unsigned char *bytes);
  void other_arg(const Plan::Arg &a, const unsigned char *at);
  static Plan::Arg::Op arg_op(const RecordField &f);

  void name_thread(uint64_t pid, uint64_t tid);
  void learn_name(uint64_t pid, uint64_t tid);
  // On `thread`: an event was just written on it, or is next.
  void flow_point(DrawDecl::Flow point, FxtWriter::Thread thread, uint64_t ts, FxtRef category,
                  uint64_t key);
  // A slice [start, end] on `thread` (nesting key `nest`), or in an async
  // lane when it is drawn there or would not nest; its flow point, if any.
  void slice(const Plan &p, FxtWriter::Thread thread, uint64_t nest, uint64_t start, uint64_t end,
             bool flow, uint64_t key);
  // A track keyed by a script's value: a thread of its own under the process.
  struct Track {
    uint64_t koid = 0;
    std::string name;
    // Its counters' names, pinned: a plan's name -> "track-name plan-name".
    mutable std::vector<std::pair<FxtRef, FxtRef>> counters{};
  };
  // The keyed track of plan `p` for this record, under process `pid`.
  const Track &track(uint64_t pid, const Plan &p, const unsigned char *bytes);
  FxtRef counter_name(const Track &track, const Plan &p);
  std::string process_name(uint64_t pid);

  std::string path_;
  OutputFile out_;
  GzipProgress gzip_progress_;  // of file_, when gzipped
  std::FILE *file_ = nullptr;
  int close_error_ = 0;
  std::unique_ptr<FxtWriter> writer_;
  std::vector<std::vector<Plan>> plans_;               // by probe index
  std::vector<std::pair<uint32_t, uint32_t>> header_;  // offsets of __ts and __task, by probe
  std::vector<uint32_t> record_sizes_;                 // by probe
  // Names known by tid, and the name each drawn thread was given.
  std::unordered_map<uint64_t, std::string> names_, drawn_names_;
  std::unordered_set<uint64_t> named_processes_;
  // Threads named lately and tasks whose names were learned lately: records
  // come from a few threads at a time, and need no hash-set work again.
  struct Task {
    uint64_t pid = ~0ull, tid = ~0ull;
  };
  struct RecentTasks {
    uint64_t tasks[4] = {~0ull, ~0ull, ~0ull, ~0ull};  // pid << 32 | tid (both 32 bits)
    size_t next = 0;
    // Whether `t` is one of them; if not, it is now, in place of the oldest.
    bool seen(Task t) {
      uint64_t task = t.pid << 32 | (t.tid & 0xffffffff);
      if (tasks[0] == task || tasks[1] == task || tasks[2] == task || tasks[3] == task)
        return true;
      tasks[next++ % 4] = task;
      return false;
    }
  };
  RecentTasks named_, learned_;
  FxtRef flow_ref_;                             // "flow"
  std::unordered_map<uint64_t, Track> tracks_;  // by koid
  // Processes of track groups, by name: synthetic pids from kGroupPids,
  // above any pid Linux gives (pid_max is at most 2^22).
  static constexpr uint64_t kGroupPids = 0x7ffe0000;
  std::unordered_map<std::string, uint64_t> group_pids_;
  FxtArgWords args_;  // reused per event
  const FxtArgWords no_args_{};
  ThreadNesting nesting_;
  AsyncLanes lanes_;
  uint64_t lane_slices_ = 0;  // slices drawn in async lanes as they would not nest
  // Each counter's last values (its arguments' bytes, in order), by
  // process << 32 | name: at most kMaxCounters, then forgotten.
  static constexpr size_t kMaxCounters = 1 << 16;
  std::unordered_map<uint64_t, std::string> last_counter_values_;
  static constexpr size_t kMaxOpenFlows = 1 << 20;
  OpenFlows open_flows_;
  EndedFlows ended_flows_;
  uint64_t last_flow_id_ = 0;
  uint64_t orphan_flow_points_ = 0;  // steps and ends whose begin was never seen
  uint64_t events_ = 0;
};

}  // namespace mt
