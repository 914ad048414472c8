// Plans each draw={...} from record layouts and writes records as FXT events and flows.
#include "trace/fxt_sink.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "bpf_headers/mt_abi.h"
#include "common/error.h"
#include "common/write_all.h"
#include "trace/fxt_format.h"
#include "trace/gzip_file.h"
#include "trace/process_names.h"

namespace mt {

namespace {

constexpr uint64_t kTrackBit = 1ull << 63;  // synthetic thread koids, apart from real tids
constexpr const char *kSelfName = "moontrace";

uint64_t load(const unsigned char *p, uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size < 8 ? size : 8);
  return v;
}

template <class T>
T load_as(const unsigned char *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::optional<RecordField> find(const std::vector<RecordField> &fields, const std::string &name) {
  for (const auto &f : fields)
    if (f.name == name)
      return f;
  return std::nullopt;
}

}  // namespace

FxtSink::Plan::Arg::Op FxtSink::arg_op(const RecordField &f) {
  using Op = FxtSink::Plan::Arg::Op;
  bool is_signed = f.kind == FieldKind::Signed;
  if (f.kind == FieldKind::Signed || f.kind == FieldKind::Unsigned)
    switch (f.size) {
      case 1: return is_signed ? Op::S8 : Op::U8;
      case 2: return is_signed ? Op::S16 : Op::U16;
      case 4: return is_signed ? Op::S32 : Op::U32;
      case 8: return is_signed ? Op::S64 : Op::U64;
      default: return Op::Other;
    }
  if (f.kind == FieldKind::Pointer && f.size == 8)
    return Op::Pointer;
  if (f.kind == FieldKind::Bool && f.size == 1)
    return Op::Bool;
  if (f.kind == FieldKind::String)
    return Op::String;
  return Op::Other;
}

FxtSink::FxtSink(OutputFile file) : path_(file.path()), out_(std::move(file)) {
  std::FILE *plain = out_.stream();
  file_ = is_gzip_path(path_) ? gzip_stream(plain, &gzip_progress_) : plain;
  if (!file_) {
    int error = errno;
    std::fclose(plain);
    throw Error("cannot write " + path_ + ": " + std::strerror(error));
  }
  // The writer hands over whole records 64 KiB at a time: written at once,
  // a trace cut by SIGKILL ends on a record's end.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  writer_ = std::make_unique<FxtWriter>(file_);
  flow_ref_ = writer_->pin("flow");
}

FxtSink::FxtSink(const std::string &path) : FxtSink(OutputFile::open(path)) {
  commit();
}

FxtSink::~FxtSink() {
  if (file_) {
    writer_->flush();
    std::fclose(file_);
  }
}

void FxtSink::close() {
  if (!file_)
    return;
  writer_->flush();
  errno = 0;
  int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0 && !close_error_)
    close_error_ = errno ? errno : EIO;
  out_.settle(!error());
}

int FxtSink::error() const {
  return writer_->error() ? writer_->error() : close_error_;
}

std::string FxtSink::failure() const {
  // Gzipped, what reached the file is what the compressor wrote, which
  // lags what was handed to it.
  uint64_t reached = is_gzip_path(path_) ? writer_->records_within(gzip_progress_.bytes_written)
                                         : writer_->records_written();
  return "cannot write " + path_ + ": " + std::string(output_error_text(error())) + " (" +
         std::to_string(reached) + " of " + std::to_string(writer_->records()) +
         " records reached it)";
}

void FxtSink::plan(const Declaration &decl, const GeneratedProgram &generated,
                   const std::vector<std::optional<RecordLayout>> &layouts) {
  plans_.assign(generated.probes.size(), {});
  header_.assign(generated.probes.size(), {0, 0});
  record_sizes_.assign(generated.probes.size(), UINT32_MAX);
  for (size_t i = 0; i < generated.probes.size(); i++) {
    const ProbeDecl &probe = decl.probes[generated.probes[i].decl_id];
    if (probe.draws.empty() || !layouts[i])
      continue;
    const RecordLayout &layout = *layouts[i];
    auto ts = find(layout.hidden, "__ts"), task = find(layout.hidden, "__task");
    if (!ts || !task)
      throw Error("moontrace bug: drawn record without time or thread", probe.where);
    header_[i] = {ts->offset, task->offset};
    record_sizes_[i] = layout.size;
    auto offset_of = [&](const std::string &name) {
      auto f = name.empty() ? std::nullopt : find(layout.hidden, name);
      return f ? f->offset : kNone;
    };
    for (const auto &d : probe.draws) {
      Plan plan{d.kind,       d.name,        d.category,     d.process_track ? "" : d.track_name,
                d.flow_point, d.async_track, d.process_track};
      if (auto label = d.track_label.empty() ? std::nullopt : find(layout.hidden, d.track_label)) {
        plan.label_at = label->offset;
        plan.label_size = label->size;
        plan.label_is_string = label->kind == FieldKind::String;
      }
      if (!d.track_group.empty()) {
        auto [group, fresh] =
            group_pids_.try_emplace(d.track_group, kGroupPids + group_pids_.size());
        if (fresh)
          writer_->process(group->second, d.track_group);
        plan.group_pid = group->second;
      }
      plan.category_ref = writer_->pin(plan.category);
      plan.name_ref = writer_->pin(plan.name);
      for (const auto &a : d.args)
        if (auto f = find(layout.fields, a)) {
          Plan::Arg arg{arg_op(*f), f->offset, f->size, f->kind, writer_->pin(f->name)};
          arg.stack_map = f->stack_map;
          if (f->cgroup_path) {
            arg.op = Plan::Arg::Op::Other;
            arg.kind = FieldKind::String;
            arg.cgroup_path = true;
          }
          if (auto named = d.value_names.find(a); named != d.value_names.end()) {
            for (const auto &value : named->second)
              arg.value_names.push_back(value.empty() ? FxtRef{} : writer_->pin(value));
            arg.op = Plan::Arg::Op::Other;
          }
          plan.args.push_back(std::move(arg));
        }
      plan.duration_at = offset_of(d.duration);
      plan.track_at = offset_of(d.track);
      plan.flow_at = offset_of(d.flow);
      plan.when_at = offset_of(d.when);
      plans_[i].push_back(std::move(plan));
    }
  }
}

void FxtSink::learn_name(uint64_t pid, uint64_t tid) {
  if (!names_.count(tid))
    names_[tid] =
        proc_comm("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm",
                  (tid == pid ? "pid " : "tid ") + std::to_string(tid));
}

void FxtSink::thread_named(const void *data, size_t size) {
  struct mt_thread_name named;
  if (size < sizeof named)
    return;
  std::memcpy(&named, data, sizeof named);
  uint64_t pid = named.pid, tid = named.tid;
  names_[tid].assign(named.comm, strnlen(named.comm, sizeof named.comm));
  named_ = {};  // to be compared with what was drawn again
  if (drawn_names_.count(tid))
    name_thread(pid, tid);  // renamed after it was drawn: Perfetto takes the last name
}

std::string FxtSink::process_name(uint64_t pid) {
  learn_name(pid, pid);
  return names_[pid];
}

void FxtSink::name_thread(uint64_t pid, uint64_t tid) {
  if (named_.seen({pid, tid}))
    return;  // named, and not renamed since
  if (named_processes_.insert(pid).second) {
    learn_name(pid, pid);
    writer_->process(pid, names_[pid] + cgroup_suffix(pid));  // which container it ran in
  }
  learn_name(pid, tid);
  auto [drawn, fresh] = drawn_names_.try_emplace(tid, names_[tid]);
  if (fresh || drawn->second != names_[tid]) {
    drawn->second = names_[tid];
    writer_->thread(pid, tid, drawn->second);
  }
}

const FxtSink::Track &FxtSink::track(uint64_t pid, const Plan &p, const unsigned char *bytes) {
  // Keyed by its id, else by its label's value.
  std::string_view label;
  uint64_t key;
  if (p.label_at != kNone && p.label_is_string) {
    const char *text = reinterpret_cast<const char *>(bytes + p.label_at);
    label = std::string_view(text, strnlen(text, p.label_size));
    key = p.track_at != kNone ? load(bytes + p.track_at, 8) : std::hash<std::string_view>{}(label);
  } else {
    key =
        p.track_at != kNone ? load(bytes + p.track_at, 8) : load(bytes + p.label_at, p.label_size);
  }
  // Per process: a small key may stand for different things in each.
  uint64_t koid = (key * 0x9e3779b97f4a7c15ull ^ pid) | kTrackBit;
  auto [known, fresh] = tracks_.try_emplace(koid);
  if (fresh) {
    std::string name;
    if (p.process_track) {
      name = process_name(pid) + " (process)";
    } else if (p.label_at != kNone) {
      name = p.track_name.empty() ? "" : p.track_name + " ";
      name += p.label_is_string ? std::string(label)
                                : std::to_string(load(bytes + p.label_at, p.label_size));
    } else {
      char hex[32];
      std::snprintf(hex, sizeof(hex), " 0x%llx", static_cast<unsigned long long>(key));
      name = p.track_name + hex;
    }
    known->second = {koid, name};
    writer_->thread(pid, koid, known->second.name);
  }
  return known->second;
}

// A counter on a keyed track is named after the track, then the plan's
// name; pinned once per track and name.
FxtRef FxtSink::counter_name(const Track &track, const Plan &p) {
  for (const auto &[plan_name, full] : track.counters)
    if (plan_name.id == p.name_ref.id)
      return full;
  FxtRef full = writer_->pin(p.name.empty() ? track.name : track.name + " " + p.name);
  track.counters.emplace_back(p.name_ref, full);
  return full;
}

uint64_t FxtSink::arrived(uint32_t probe, const void *data, size_t size) {
  if (probe >= record_sizes_.size() || size < record_sizes_[probe])
    return UINT64_MAX;  // not a record of this layout
  auto *bytes = static_cast<const unsigned char *>(data);
  auto [ts_offset, task_offset] = header_[probe];
  uint64_t task = load(bytes + task_offset, 8);
  if (!learned_.seen({task >> 32, task & 0xffffffff}))
    learn_name(task >> 32, task & 0xffffffff);
  return load(bytes + ts_offset, 8);
}

void FxtSink::write_args(const Plan &p, const unsigned char *bytes) {
  writer_->start(args_);
  for (const Plan::Arg &a : p.args)
    write_arg(a, bytes);
}

// Perfetto keeps each argument of a counter as a series of its own (named
// after the counter and the argument, per process), whose value holds until
// its next sample: a sample writes only the values that changed since the
// counter's last one. False when none did: nothing to write.
bool FxtSink::write_changed_args(const Plan &p, FxtRef counter, uint64_t pid,
                                 const unsigned char *bytes) {
  if (last_counter_values_.size() >= kMaxCounters)
    last_counter_values_.clear();  // all values are written again, as first samples
  std::string &last = last_counter_values_[pid << 32 | counter.id];
  bool first = last.empty();
  writer_->start(args_);
  bool changed = false;
  size_t at = 0;
  for (const Plan::Arg &a : p.args) {
    std::string_view value(reinterpret_cast<const char *>(bytes + a.offset), a.size);
    if (first || last.compare(at, a.size, value) != 0) {
      write_arg(a, bytes);
      changed = true;
    }
    if (first)
      last.append(value);
    else
      last.replace(at, a.size, value);
    at += a.size;
  }
  return changed;
}

void FxtSink::write_arg(const Plan::Arg &a, const unsigned char *bytes) {
  using Op = Plan::Arg::Op;
  FxtWriter &w = *writer_;
  const unsigned char *at = bytes + a.offset;
  switch (a.op) {
    case Op::U8: w.arg_uint(args_, a.name, *at); break;
    case Op::U16: w.arg_uint(args_, a.name, load_as<uint16_t>(at)); break;
    case Op::U32: w.arg_uint(args_, a.name, load_as<uint32_t>(at)); break;
    case Op::U64: w.arg_uint(args_, a.name, load_as<uint64_t>(at)); break;
    case Op::S8: w.arg_int(args_, a.name, static_cast<int8_t>(*at)); break;
    case Op::S16: w.arg_int(args_, a.name, load_as<int16_t>(at)); break;
    case Op::S32: w.arg_int(args_, a.name, load_as<int32_t>(at)); break;
    case Op::S64: w.arg_int(args_, a.name, load_as<int64_t>(at)); break;
    case Op::Pointer: w.arg_pointer(args_, a.name, load_as<uint64_t>(at)); break;
    case Op::Bool: w.arg_bool(args_, a.name, *at != 0); break;
    case Op::String: {
      const char *s = reinterpret_cast<const char *>(at);
      w.arg_string(args_, a.name, std::string_view(s, strnlen(s, a.size)));
      break;
    }
    case Op::Other: other_arg(a, at); break;
  }
}

// An argument of another size or kind, or one whose values have names.
void FxtSink::other_arg(const Plan::Arg &a, const unsigned char *at) {
  FxtWriter &w = *writer_;
  if (a.cgroup_path) {
    w.arg_string(args_, a.name, cgroup_path_of(load(at, a.size)));
    return;
  }
  if (a.kind == FieldKind::String) {
    const char *s = reinterpret_cast<const char *>(at);
    w.arg_string(args_, a.name, std::string_view(s, strnlen(s, a.size)));
    return;
  }
  if (a.kind == FieldKind::Stack) {  // its frames, a line each, leaf first
    std::string frames;
    for (const auto &f : stack_frames(show_stack(a.stack_map, load(at, a.size))))
      frames += (frames.empty() ? "" : "\n") + f;
    w.arg_string(args_, a.name, frames);
    return;
  }
  uint64_t v = load(at, a.size);
  if (a.kind == FieldKind::Signed && a.size < 8) {
    unsigned shift = 64 - a.size * 8;
    v = static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
  }
  // A value with a name is shown by it.
  if (v < a.value_names.size() && a.value_names[v]) {
    w.arg_string(args_, a.name, a.value_names[v]);
    return;
  }
  switch (a.kind) {
    case FieldKind::Signed: w.arg_int(args_, a.name, static_cast<int64_t>(v)); break;
    case FieldKind::Pointer: w.arg_pointer(args_, a.name, v); break;
    case FieldKind::Bool: w.arg_bool(args_, a.name, v != 0); break;
    default: w.arg_uint(args_, a.name, v); break;
  }
}

void FxtSink::draw(uint32_t probe, const unsigned char *bytes, size_t size) {
  if (probe >= record_sizes_.size() || size < record_sizes_[probe])
    return;  // not a drawn record of this layout
  auto [ts_offset, task_offset] = header_[probe];
  uint64_t ts = load(bytes + ts_offset, 8);
  uint64_t task = load(bytes + task_offset, 8);
  uint64_t pid = task >> 32, tid = task & 0xffffffff;
  for (const Plan &p : plans_[probe]) {
    if (p.when_at != kNone && !bytes[p.when_at])
      continue;
    if (!p.group_pid)
      name_thread(pid, tid);  // a grouped track is drawn on for whichever task ran
    // A grouped track is under its group's process, whatever task drew on it.
    uint64_t owner = p.group_pid ? p.group_pid : pid;
    const Track *keyed =
        p.track_at != kNone || p.label_at != kNone ? &track(owner, p, bytes) : nullptr;
    FxtWriter &w = *writer_;
    FxtWriter::Thread thread = w.thread(owner, keyed ? keyed->koid : tid);
    uint64_t start = ts;
    bool flow = p.flow_at != kNone;
    uint64_t key = flow ? load(bytes + p.flow_at, 8) : 0;
    // A flow point needs an open slice: an end's is the one it closes.
    if (flow && p.kind == DrawDecl::Kind::End)
      flow_point(p.flow_point, thread, ts, p.category_ref, key);
    if (p.kind != DrawDecl::Kind::Counter)
      write_args(p, bytes);
    uint64_t nest = keyed ? keyed->koid : tid;
    switch (p.kind) {
      case DrawDecl::Kind::Instant:
        // Perfetto binds a flow point only inside an open slice.
        if (flow) {
          slice(p, thread, nest, ts, ts + 1, flow, key);
          flow = false;  // drawn with it
        } else {
          w.write(fxt::kInstant, thread, ts, p.category_ref, p.name_ref, args_, nullptr);
        }
        break;
      case DrawDecl::Kind::Slice: {
        uint64_t duration = p.duration_at != kNone ? load(bytes + p.duration_at, 8) : 1;
        start = duration <= ts ? ts - duration : ts;
        slice(p, thread, nest, start, std::max(ts, start + 1), flow, key);
        flow = false;
        break;
      }
      case DrawDecl::Kind::Begin:
        w.write(fxt::kBegin, thread, ts, p.category_ref, p.name_ref, args_, nullptr);
        break;
      case DrawDecl::Kind::End:
        w.write(fxt::kEnd, thread, ts, p.category_ref, p.name_ref, args_, nullptr);
        break;
      case DrawDecl::Kind::Counter: {
        // Perfetto keeps counters per process, by name: a keyed track's
        // counters are named after it, so each track has its own.
        uint64_t id = 0;
        FxtRef name = keyed ? counter_name(*keyed, p) : p.name_ref;
        if (write_changed_args(p, name, owner, bytes))
          w.write(fxt::kCounter, thread, ts, p.category_ref, name, args_, &id);
        break;
      }
    }
    if (flow && p.kind != DrawDecl::Kind::End)
      flow_point(p.flow_point, thread, start, p.category_ref, key);
    events_++;
  }
}

// Perfetto drops a complete slice that starts inside another on its track
// and ends after it: such a slice goes in the first free lane among those
// of its track and name, each an async track of its own in Perfetto (named
// after the slice), where overlapping slices are all shown. Perfetto binds
// flow points to thread slices only, so a lane slice's flow point is held
// by a 1-ns slice of the same name on its thread, at its start (a 1-ns
// slice always nests: see ThreadNesting::fits).
void FxtSink::slice(const Plan &p, FxtWriter::Thread thread, uint64_t nest, uint64_t start,
                    uint64_t end, bool flow, uint64_t key) {
  FxtWriter &w = *writer_;
  if (!p.async && nesting_.fits(nest, start, end)) {
    w.write(fxt::kComplete, thread, start, p.category_ref, p.name_ref, args_, &end);
  } else {
    lane_slices_ += !p.async;
    uint64_t lane = lanes_.lane(nest, p.name_ref.id, start, end);
    w.write(fxt::kAsyncBegin, thread, start, p.category_ref, p.name_ref, args_, &lane);
    w.write(fxt::kAsyncEnd, thread, end, p.category_ref, p.name_ref, no_args_, &lane);
    if (flow) {
      uint64_t hop_end = start + 1;
      nesting_.fits(nest, start, hop_end);  // true: recorded as drawn
      w.write(fxt::kComplete, thread, start, p.category_ref, p.name_ref, no_args_, &hop_end);
    }
  }
  if (flow)
    flow_point(p.flow_point, thread, start, p.category_ref, key);
}

// Flow ids in the trace are ours, one per flow. A script's key names its
// flow machine-wide (a block request issued by a traced process completes
// in an interrupt or a kworker). A key (a request pointer, reused as soon
// as the request ends) may begin again while its flow looks open (its end
// lost or filtered), and a step or end may come without its begin (begun
// before tracing). Perfetto counts both as errors; here the first starts
// a fresh flow and the second is dropped and counted. A step at the start
// of a slice drawn only after its flow ended (at its own end) joins that
// flow, when it came before the end.
void FxtSink::flow_point(DrawDecl::Flow point, FxtWriter::Thread thread, uint64_t ts,
                         FxtRef category, uint64_t key) {
  if (point == DrawDecl::Flow::Begin) {
    if (open_flows_.size() >= kMaxOpenFlows && !open_flows_.find(key))
      open_flows_.clear();  // ends never seen: forget them rather than grow
    uint64_t id = ++last_flow_id_;
    open_flows_.open(key, id);
    writer_->write(fxt::kFlowBegin, thread, ts, category, flow_ref_, id);
    return;
  }
  bool end = point == DrawDecl::Flow::End;
  uint64_t id = end ? open_flows_.close(key) : open_flows_.find(key);
  if (end && id)
    ended_flows_.ended(key, id, ts);
  else if (!id && !end)
    id = ended_flows_.find(key, ts);
  if (!id) {
    orphan_flow_points_++;
    return;
  }
  writer_->write(end ? fxt::kFlowEnd : fxt::kFlowStep, thread, ts, category, flow_ref_, id);
}

void FxtSink::lost(uint64_t ts, uint64_t total) {
  uint64_t self = static_cast<uint64_t>(getpid());
  if (named_processes_.insert(self).second)
    writer_->process(self, kSelfName);
  name_thread(self, self);
  writer_->counter(self, self, ts, kSelfName, "lost records", 0, {FxtArg::uinteger("lost", total)});
}

}  // namespace mt
