#include "runtime/fxt_sink.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "compiler/error.h"
#include "runtime/gzip_file.h"

namespace mt {

namespace {

constexpr uint64_t kTrackBit = 1ull << 63;  // synthetic thread koids, apart from real tids
constexpr const char *kSelfName = "moontrace";

std::string proc_comm(const std::string &path, const std::string &fallback) {
  std::ifstream in(path);
  std::string name;
  if (!std::getline(in, name) || name.empty())
    return fallback;
  return name;
}

uint64_t load(const unsigned char *p, uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size < 8 ? size : 8);
  return v;
}

// A record field as an FXT argument; strings point into the record.
FxtArg to_arg(const RecordField &f, const unsigned char *record) {
  const unsigned char *p = record + f.offset;
  switch (f.kind) {
    case FieldKind::Signed: {
      uint64_t v = load(p, f.size);
      if (f.size < 8 && (v >> (f.size * 8 - 1)) & 1)
        v |= ~0ull << (f.size * 8);
      return FxtArg::integer(f.name, static_cast<int64_t>(v));
    }
    case FieldKind::Pointer: return FxtArg::pointer(f.name, load(p, f.size));
    case FieldKind::Bool: return FxtArg::boolean(f.name, load(p, f.size) != 0);
    case FieldKind::String: {
      const char *s = reinterpret_cast<const char *>(p);
      return FxtArg::string(f.name, std::string_view(s, strnlen(s, f.size)));
    }
    default: return FxtArg::uinteger(f.name, load(p, f.size));
  }
}

std::optional<RecordField> find(const std::vector<RecordField> &fields, const std::string &name) {
  for (const auto &f : fields)
    if (f.name == name)
      return f;
  return std::nullopt;
}

}  // namespace

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
}

int FxtSink::error() const {
  return writer_->error() ? writer_->error() : close_error_;
}

std::string FxtSink::failure() const {
  // Gzipped, what reached the file is what the compressor wrote, which
  // lags what was handed to it.
  uint64_t reached = is_gzip_path(path_) ? writer_->records_within(gzip_progress_.bytes_written)
                                         : writer_->records_written();
  return "cannot write " + path_ + ": " + std::strerror(error()) + " (" + std::to_string(reached) +
         " of " + std::to_string(writer_->records()) + " records reached it)";
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
    for (const auto &d : probe.draws) {
      Plan plan{d.kind, d.name, d.category,  d.process_track ? "" : d.track_name, {}, {},
                {},     {},     d.flow_point};
      for (const auto &a : d.args)
        if (auto f = find(layout.fields, a)) {
          plan.args.push_back(*f);
          auto named = d.value_names.find(a);
          plan.value_names.push_back(named == d.value_names.end() ? std::vector<std::string>{}
                                                                  : named->second);
        }
      plan.category_ref = writer_->pin(plan.category);
      plan.name_ref = writer_->pin(plan.name);
      for (const auto &f : plan.args)
        plan.arg_refs.push_back(writer_->pin(f.name));
      if (!d.duration.empty())
        plan.duration = find(layout.hidden, d.duration);
      if (!d.track.empty())
        plan.track = find(layout.hidden, d.track);
      if (!d.flow.empty())
        plan.flow = find(layout.hidden, d.flow);
      if (!d.when.empty())
        plan.when = find(layout.hidden, d.when);
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
  if (size < 28)
    return;
  auto *bytes = static_cast<const unsigned char *>(data);
  uint64_t pid = load(bytes + 4, 4), tid = load(bytes + 8, 4);
  const char *comm = reinterpret_cast<const char *>(bytes + 12);
  names_[tid].assign(comm, strnlen(comm, 16));
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
    writer_->process(pid, names_[pid]);
  }
  learn_name(pid, tid);
  auto [drawn, fresh] = drawn_names_.try_emplace(tid, names_[tid]);
  if (fresh || drawn->second != names_[tid]) {
    drawn->second = names_[tid];
    writer_->thread(pid, tid, drawn->second);
  }
}

const FxtSink::Track &FxtSink::track(uint64_t pid, uint64_t key, const std::string &name) {
  // Per process: a small key may stand for different things in each.
  uint64_t koid = (key * 0x9e3779b97f4a7c15ull ^ pid) | kTrackBit;
  auto [known, fresh] = tracks_.try_emplace(koid);
  if (fresh) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), " 0x%llx", static_cast<unsigned long long>(key));
    known->second = {koid, name.empty() ? process_name(pid) + " (process)" : name + hex};
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
  auto *bytes = static_cast<const unsigned char *>(data);
  auto [ts_offset, task_offset] = header_[probe];
  if (size < record_sizes_[probe])
    return UINT64_MAX;  // not a record of this layout
  uint64_t task = load(bytes + task_offset, 8);
  if (!learned_.seen({task >> 32, task & 0xffffffff}))
    learn_name(task >> 32, task & 0xffffffff);
  return load(bytes + ts_offset, 8);
}

void FxtSink::draw(uint32_t probe, const unsigned char *bytes, size_t) {
  auto [ts_offset, task_offset] = header_[probe];
  uint64_t ts = load(bytes + ts_offset, 8);
  uint64_t task = load(bytes + task_offset, 8);
  uint64_t pid = task >> 32, tid = task & 0xffffffff;
  name_thread(pid, tid);
  for (const Plan &p : plans_[probe]) {
    if (p.when && !bytes[p.when->offset])
      continue;
    const Track *keyed =
        p.track ? &track(pid, load(bytes + p.track->offset, 8), p.track_name) : nullptr;
    uint64_t thread = keyed ? keyed->koid : tid;
    args_.clear();
    for (size_t i = 0; i < p.args.size(); i++) {
      args_.push_back(to_arg(p.args[i], bytes));
      // A value with a name is shown by it.
      const auto &names = p.value_names[i];
      if (!names.empty()) {
        uint64_t v = args_.back().kind == FxtArg::Kind::Int ? static_cast<uint64_t>(args_.back().i)
                                                            : args_.back().u;
        if (v < names.size() && !names[v].empty())
          args_.back() = FxtArg::string(p.args[i].name, names[v]);
      }
      args_.back().name_ref = p.arg_refs[i];
    }
    uint64_t start = ts;
    // A flow point needs an open slice: an end's is the one it closes.
    if (p.flow && p.kind == DrawDecl::Kind::End)
      flow_point(p.flow_point, pid, thread, ts, p.category_ref, load(bytes + p.flow->offset, 8));
    switch (p.kind) {
      case DrawDecl::Kind::Instant:
        // Perfetto binds a flow point only inside an open slice.
        if (p.flow)
          writer_->complete(pid, thread, ts, ts + 1, p.category_ref, p.name_ref, args_);
        else
          writer_->instant(pid, thread, ts, p.category_ref, p.name_ref, args_);
        break;
      case DrawDecl::Kind::Slice: {
        uint64_t duration = p.duration ? load(bytes + p.duration->offset, 8) : 1;
        start = duration <= ts ? ts - duration : ts;
        writer_->complete(pid, thread, start, std::max(ts, start + 1), p.category_ref, p.name_ref,
                          args_);
        break;
      }
      case DrawDecl::Kind::Begin:
        writer_->begin(pid, thread, ts, p.category_ref, p.name_ref, args_);
        break;
      case DrawDecl::Kind::End:
        writer_->end(pid, thread, ts, p.category_ref, p.name_ref, args_);
        break;
      case DrawDecl::Kind::Counter:
        // Perfetto keeps counters per process, by name: a keyed track's
        // counters are named after it, so each track has its own.
        writer_->counter(pid, thread, ts, p.category_ref,
                         keyed ? counter_name(*keyed, p) : p.name_ref, 0, args_);
        break;
    }
    if (p.flow && p.kind != DrawDecl::Kind::End)
      flow_point(p.flow_point, pid, thread, start, p.category_ref, load(bytes + p.flow->offset, 8));
    events_++;
  }
}

// Flow ids in the trace are ours, one per flow: a script's key (a request
// pointer, reused as soon as the request ends) may begin again while its
// flow looks open (its end lost or filtered), and a step or end may come
// without its begin (begun before tracing). Perfetto counts both as
// errors; here the first starts a fresh flow and the second is dropped.
void FxtSink::flow_point(DrawDecl::Flow point, uint64_t pid, uint64_t thread, uint64_t ts,
                         FxtRef category, uint64_t key) {
  auto open = open_flows_.find({pid, key});
  if (point == DrawDecl::Flow::Begin) {
    if (open_flows_.size() >= kMaxOpenFlows && open == open_flows_.end())
      open_flows_.clear();  // ends never seen: forget them rather than grow
    uint64_t id = ++last_flow_id_;
    open_flows_[{pid, key}] = id;
    writer_->flow(FxtFlow::Begin, pid, thread, ts, category, flow_ref_, id);
    return;
  }
  if (open == open_flows_.end()) {
    orphan_flow_points_++;
    return;
  }
  bool end = point == DrawDecl::Flow::End;
  writer_->flow(end ? FxtFlow::End : FxtFlow::Step, pid, thread, ts, category, flow_ref_,
                open->second);
  if (end)
    open_flows_.erase(open);
}

void FxtSink::lost(uint64_t ts, uint64_t total) {
  uint64_t self = static_cast<uint64_t>(getpid());
  if (named_processes_.insert(self).second)
    writer_->process(self, kSelfName);
  name_thread(self, self);
  writer_->counter(self, self, ts, kSelfName, "lost records", 0, {FxtArg::uinteger("lost", total)});
}

}  // namespace mt
