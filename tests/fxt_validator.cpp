// Checks a trace against Perfetto's FXT import rules (fxt_validator.h).
#include "tests/fxt_validator.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "common/error.h"
#include "trace/fxt_format.h"
#include "trace/gzip_file.h"

namespace mt::testing {
namespace {

constexpr int64_t kPending = -1;
constexpr size_t kMaxListed = 100;

using namespace mt::fxt;

// Events Perfetto puts on the thread's own track.
bool on_thread_track(int event_type) {
  switch (event_type) {
    case kInstant:
    case kBegin:
    case kEnd:
    case kComplete:
    case kFlowBegin:
    case kFlowStep:
    case kFlowEnd: return true;
    default: return false;
  }
}

const char *flow_kind(int event_type) {
  switch (event_type) {
    case kFlowBegin: return "flow_begin";
    case kFlowStep: return "flow_step";
    default: return "flow_end";
  }
}

// A slice on a thread's stack, as Perfetto's slice tracker holds it.
struct Slice {
  std::string name;
  uint64_t ts = 0;
  int64_t dur = kPending;  // set for instants and complete events, and for begins once ended
  uint64_t offset = 0;
  bool from_begin = false;

  uint64_t end() const { return ts + static_cast<uint64_t>(dur); }
  std::string text() const {
    std::string s = "'" + name + "' ";
    if (dur == kPending)
      return s + "(begun at " + std::to_string(ts) + ")";
    return s + "[" + std::to_string(ts) + ", " + std::to_string(end()) + "]";
  }
};

using ThreadKey = std::pair<uint64_t, uint64_t>;  // pid, tid

std::string thread_text(const FxtRecord &r) {
  return "pid=" + std::to_string(r.pid) + " tid=" + std::to_string(r.tid);
}

class Checker {
 public:
  std::vector<std::string> run(const std::vector<FxtRecord> &records) {
    if (records.empty() || records[0].type != 1)
      add(records.empty() ? 0 : records[0].offset,
          "the trace does not start with an initialization record (ticks per second)");
    else if (records[0].ticks_per_second == 0)
      add(records[0].offset, "initialization record with 0 ticks per second");

    for (const auto &r : records) {
      if (r.args.size() > kMaxArgs)
        add(r.offset, std::to_string(r.args.size()) + " arguments; FXT allows at most 15");
      if (r.type == 7 && r.object_type == 2)
        thread_object(r);
    }

    std::vector<const FxtRecord *> events;
    std::map<ThreadKey, const FxtRecord *> last_begin_end;
    for (const auto &r : records) {
      if (r.type != 4)
        continue;
      events.push_back(&r);
      if (r.event_type > kFlowEnd)
        add(r.offset,
            "unknown event type " + std::to_string(r.event_type) + ": Perfetto ignores the event");
      if (r.event_type == kCounter)
        counter_values(r);
      if (on_thread_track(r.event_type))
        thread_named(r);
      if (r.event_type == kBegin || r.event_type == kEnd) {
        auto &last = last_begin_end[{r.pid, r.tid}];
        if (last && r.ts < last->ts)
          add(r.offset, std::string(r.event_type == kBegin ? "begin" : "end") + " '" + r.name +
                            "' at " + std::to_string(r.ts) + " on " + thread_text(r) +
                            " goes back in time: the previous begin/end of the thread, at offset " +
                            std::to_string(last->offset) + ", is at " + std::to_string(last->ts));
        last = &r;
      }
    }

    // Perfetto sorts events by timestamp; equal timestamps keep file order.
    std::stable_sort(events.begin(), events.end(),
                     [](const FxtRecord *a, const FxtRecord *b) { return a->ts < b->ts; });
    for (const FxtRecord *e : events) {
      const FxtRecord &r = *e;
      // Perfetto keys an FXT async track by its correlation id alone
      // (InternFuchsiaAsyncTrack), where slices nest as on a thread: the
      // first process and name to use an id own its track.
      if (r.event_type == kAsyncBegin || r.event_type == kAsyncEnd) {
        auto [owner, fresh] = async_owners_.try_emplace(r.extra, r.pid, r.name);
        if (!fresh && r.event_type == kAsyncBegin && owner->second != std::make_pair(r.pid, r.name))
          add(r.offset, "async '" + r.name + "' id=" + std::to_string(r.extra) +
                            " on pid=" + std::to_string(r.pid) + " shares its track with '" +
                            owner->second.second +
                            "' of pid=" + std::to_string(owner->second.first) +
                            ": Perfetto keys async tracks by id alone");
        auto &stack = async_stacks_[r.extra];
        if (r.event_type == kAsyncBegin)
          start_slice(stack, r, kPending);
        else
          end_slice(stack, r);
        continue;
      }
      if (!on_thread_track(r.event_type))
        continue;
      auto &stack = stacks_[{r.pid, r.tid}];
      switch (r.event_type) {
        case kInstant: start_slice(stack, r, 0); break;
        case kBegin: start_slice(stack, r, kPending); break;
        case kComplete:
          if (r.extra < r.ts)
            add(r.offset, "complete '" + r.name + "' on " + thread_text(r) + " ends (" +
                              std::to_string(r.extra) + ") before it starts (" +
                              std::to_string(r.ts) + "): Perfetto drops it");
          else
            start_slice(stack, r, static_cast<int64_t>(r.extra - r.ts));
          break;
        case kEnd: end_slice(stack, r); break;
        default: flow_point(stack, r); break;
      }
    }

    for (const auto &[key, stack] : stacks_)
      for (const auto &s : stack)
        if (s.from_begin && s.dur == kPending)
          add(s.offset, "begin " + s.text() + " on pid=" + std::to_string(key.first) +
                            " tid=" + std::to_string(key.second) +
                            " is never ended: Perfetto shows a slice that did not end");
    for (const auto &[id, stack] : async_stacks_)
      for (const auto &s : stack)
        if (s.dur == kPending)
          add(s.offset, "async begin " + s.text() + " id=" + std::to_string(id) +
                            " is never ended: Perfetto shows a slice that did not end");

    std::stable_sort(problems_.begin(), problems_.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto &[offset, text] : problems_) {
      if (out.size() == kMaxListed) {
        out.push_back("... and " + std::to_string(problems_.size() - kMaxListed) +
                      " more problems");
        break;
      }
      out.push_back("offset " + std::to_string(offset) + ": " + text);
    }
    return out;
  }

 private:
  void add(uint64_t offset, std::string text) { problems_.emplace_back(offset, std::move(text)); }

  void thread_object(const FxtRecord &r) {
    const FxtArgValue *process = nullptr;
    for (const auto &a : r.args)
      if (a.name == "process")
        process = &a;
    std::string what = "thread kernel object koid=" + std::to_string(r.koid) + " '" + r.name + "'";
    if (!process) {
      add(r.offset, what + " has no 'process' argument: Perfetto puts the thread in no process");
      faulty_objects_.insert(r.koid);
    } else if (process->type != 8) {
      add(r.offset, what + ": its 'process' argument is of FXT type " +
                        std::to_string(process->type) +
                        ", not a koid (8): Perfetto drops the record "
                        "(fuchsia_invalid_event_arg_type)");
      faulty_objects_.insert(r.koid);
    } else {
      thread_objects_[r.koid].insert(process->u);
    }
  }

  // Once per thread: its kernel object names it and puts it in its process.
  void thread_named(const FxtRecord &r) {
    if (!checked_threads_.insert({r.pid, r.tid}).second || faulty_objects_.count(r.tid))
      return;  // once per thread; a faulty object is a problem already
    auto it = thread_objects_.find(r.tid);
    if (it == thread_objects_.end())
      add(r.offset, thread_text(r) + " has no thread kernel object: Perfetto shows it unnamed");
    else if (!it->second.count(r.pid))
      add(r.offset, "events put tid=" + std::to_string(r.tid) + " in pid=" + std::to_string(r.pid) +
                        " but its thread kernel object has another 'process': Perfetto makes "
                        "two threads and names the other one");
  }

  void counter_values(const FxtRecord &r) {
    for (const auto &a : r.args)
      if (a.type < 1 || a.type > 5)
        add(r.offset, "counter '" + r.name + "' argument '" + a.name +
                          "' is not a number: Perfetto drops it (fuchsia_non_numeric_counters)");
  }

  // Perfetto's slice tracker before a slice starts (dur known) or an end:
  // pops what ended before `ts`; returns false when the new complete slice
  // partly overlaps one on the stack, which drops it.
  bool close_stack(std::vector<Slice> &stack, const FxtRecord &r, int64_t new_dur) {
    bool incomplete_above = false;
    for (int i = static_cast<int>(stack.size()) - 1; i >= 0; i--) {
      const Slice s = stack[i];
      if (s.dur == kPending) {
        incomplete_above = true;
        continue;
      }
      if (incomplete_above) {
        if (r.ts <= s.end())
          continue;
        add(r.offset, "at " + std::to_string(r.ts) + " on " + thread_text(r) + ", " + s.text() +
                          " has ended while '" + stack.back().name +
                          "', begun inside it, is still open: Perfetto cuts the begun slice "
                          "at the end of its parent (misplaced_end_event)");
        stack.resize(i);
        incomplete_above = false;
        continue;
      }
      bool ends_before = s.end() < r.ts;
      bool ends_same = s.end() == r.ts && !(s.dur == 0 && new_dur == 0);
      if (ends_before || ends_same) {
        stack.pop_back();
        continue;
      }
      if (new_dur == kPending)
        continue;
      if (r.ts < s.end() && r.ts + static_cast<uint64_t>(new_dur) > s.end()) {
        add(r.offset, "complete '" + r.name + "' [" + std::to_string(r.ts) + ", " +
                          std::to_string(r.ts + new_dur) + "] on " + thread_text(r) +
                          " partly overlaps " + s.text() +
                          ": Perfetto drops it (slice_drop_overlapping_complete_event)");
        return false;
      }
    }
    return true;
  }

  void start_slice(std::vector<Slice> &stack, const FxtRecord &r, int64_t dur) {
    if (!close_stack(stack, r, dur))
      return;
    stack.push_back(Slice{r.name, r.ts, dur, r.offset, r.event_type == kBegin});
  }

  void end_slice(std::vector<Slice> &stack, const FxtRecord &r) {
    close_stack(stack, r, kPending);
    int open = static_cast<int>(stack.size()) - 1;
    while (open >= 0 && stack[open].dur != kPending)
      open--;
    if (open < 0) {
      add(r.offset, "end '" + r.name + "' at " + std::to_string(r.ts) + " on " + thread_text(r) +
                        " without an open begin: Perfetto ignores it");
      return;
    }
    Slice &s = stack[open];
    if (!r.name.empty() && r.name != s.name)
      add(r.offset, "end '" + r.name + "' at " + std::to_string(r.ts) + " on " + thread_text(r) +
                        " closes " + s.text() + " from offset " + std::to_string(s.offset) +
                        ": Perfetto ends the innermost open slice whatever its name");
    s.dur = static_cast<int64_t>(r.ts - s.ts);
    if (open == static_cast<int>(stack.size()) - 1)
      stack.pop_back();
  }

  void flow_point(std::vector<Slice> &stack, const FxtRecord &r) {
    std::string what = std::string(flow_kind(r.event_type)) + " id=" + std::to_string(r.extra) +
                       " at " + std::to_string(r.ts) + " on " + thread_text(r);
    // Perfetto binds the point to the top of the stack as it stands: it does
    // not pop slices that ended before the point.
    if (stack.empty()) {
      add(r.offset, what + ": no slice open, Perfetto drops the point (flow_no_enclosing_slice)");
      return;
    }
    const Slice &top = stack.back();
    if (top.dur != kPending && top.end() < r.ts)
      add(r.offset, what + " binds to " + top.text() + ", which ended before it");

    // Perfetto's flow tracker keys flows by id alone, whatever the process
    // (fuchsia_trace_parser.cc: flow_tracker->Begin(track, correlation_id)).
    auto it = open_flows_.find(r.extra);
    if (r.event_type == kFlowBegin) {
      if (it != open_flows_.end()) {
        add(r.offset, what + ": the id is already open since offset " + std::to_string(it->second) +
                          " (flow_duplicate_id)");
        return;
      }
      open_flows_[r.extra] = r.offset;
    } else if (it == open_flows_.end()) {
      add(r.offset,
          what + " without an open flow_begin (" +
              (r.event_type == kFlowStep ? "flow_step_without_start" : "flow_end_without_start") +
              ")");
    } else if (r.event_type == kFlowEnd) {
      open_flows_.erase(it);
    }
  }

  std::vector<std::pair<uint64_t, std::string>> problems_;
  std::map<uint64_t, std::set<uint64_t>> thread_objects_;  // tid -> the pids named for it
  std::set<uint64_t> faulty_objects_;  // thread objects without a koid 'process'
  std::set<ThreadKey> checked_threads_;
  std::map<ThreadKey, std::vector<Slice>> stacks_;
  std::map<uint64_t, std::vector<Slice>> async_stacks_;                // by id
  std::map<uint64_t, std::pair<uint64_t, std::string>> async_owners_;  // id -> pid, name
  std::map<uint64_t, uint64_t> open_flows_;                            // id -> offset
};

}  // namespace

std::vector<std::string> perfetto_problems(const std::vector<FxtRecord> &records) {
  return Checker().run(records);
}

std::vector<std::string> perfetto_problems_in_file(const std::string &path) {
  // Read as `moontrace dump` reads: a piece at a time, inflated if gzipped
  // (Perfetto opens a gzipped trace as the trace inside).
  std::vector<FxtRecord> records;
  try {
    TraceFileReader file(path);
    FxtByteSource source = [&](char *buf, size_t size) { return file.read(buf, size); };
    read_fxt(source, [&](const FxtRecord &r) { records.push_back(r); });
  } catch (const Error &e) {
    std::string message = e.what();
    return {message.rfind("cannot read ", 0) == 0 ? "cannot read " + path : path + ": " + message};
  }
  return perfetto_problems(records);
}

}  // namespace mt::testing
