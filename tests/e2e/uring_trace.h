// Traces written by scripts/uring.lua, read back for the tests: run the
// script on a command, check the trace against Perfetto's import rules, and
// look up its events.
#pragma once
#include <algorithm>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/e2e/e2e_support.h"
#include "tests/e2e/json_lines.h"
#include "tests/fxt_validator.h"
#include "trace/fxt_reader.h"
#include "trace/gzip_file.h"

namespace e2e {

struct Trace {
  std::vector<mt::FxtRecord> records;
  // Events named `name` (slices, in lanes of async tracks too, and instants).
  std::vector<const mt::FxtRecord *> named(const std::string &name) const {
    std::vector<const mt::FxtRecord *> out;
    for (const auto &r : records)
      if (r.type == 4 && r.name == name && r.event_type != 7 && r.event_type != 8 &&
          r.event_type != 9 && r.event_type != 10)
        out.push_back(&r);
    return out;
  }
  // Flow points of one kind (8 begin, 9 step, 10 end): request flows by
  // default, chain flows with category "io_uring_link".
  size_t flow_points(int event_type, const std::string &category = "io_uring") const {
    return std::count_if(records.begin(), records.end(), [&](const mt::FxtRecord &r) {
      return r.type == 4 && r.event_type == event_type && r.category == category;
    });
  }
  // The processes of its events and kernel objects.
  std::set<uint64_t> pids() const;
  std::set<std::string> thread_names() const {
    std::set<std::string> names;
    for (const auto &[tid, name] : thread_names_by_tid())
      names.insert(name);
    return names;
  }
  // Thread names by tid, from the thread kernel objects.
  std::map<uint64_t, std::string> thread_names_by_tid() const {
    std::map<uint64_t, std::string> names;
    for (const auto &r : records)
      if (r.type == 7 && r.object_type == 2)
        names[r.koid] = r.name;
    return names;
  }
};

inline uint64_t arg(const mt::FxtRecord &r, const std::string &name) {
  for (const auto &a : r.args)
    if (a.name == name)
      return a.type == 1 || a.type == 3 ? static_cast<uint64_t>(a.i) : a.u;
  ADD_FAILURE() << "no argument " << name << " on " << r.name;
  return 0;
}

inline const mt::FxtArgValue *find_arg(const mt::FxtRecord &r, const std::string &name) {
  for (const auto &a : r.args)
    if (a.name == name)
      return &a;
  return nullptr;
}

inline std::string text_arg(const mt::FxtRecord &r, const std::string &name) {
  const auto *a = find_arg(r, name);
  return a ? a->text : "";
}

// Each request flow's end (its final completion) with the user_data of the
// request, in time order. Only a request's submit (or req_failed) names
// it: its flow begins on the same thread at the same time.
inline std::vector<std::pair<const mt::FxtRecord *, uint64_t>> ended_requests(const Trace &t) {
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> user_data_at;  // (tid, ts) -> user_data
  for (const char *name : {"submit", "req_failed"})
    for (const auto *r : t.named(name))
      user_data_at[{r->tid, r->ts}] = arg(*r, "user_data");
  std::vector<const mt::FxtRecord *> points;
  for (const auto &r : t.records)
    if (r.type == 4 && (r.event_type == 8 || r.event_type == 10) && r.category == "io_uring")
      points.push_back(&r);
  std::stable_sort(points.begin(), points.end(),
                   [](const auto *a, const auto *b) { return a->ts < b->ts; });
  std::map<uint64_t, uint64_t> open;  // flow id -> user_data
  std::vector<std::pair<const mt::FxtRecord *, uint64_t>> out;
  for (const auto *p : points) {
    if (p->event_type == 8) {
      auto at = user_data_at.find({p->tid, p->ts});
      if (at != user_data_at.end())
        open[p->extra] = at->second;
    } else if (auto o = open.find(p->extra); o != open.end()) {
      out.push_back({p, o->second});
      open.erase(o);
    }
  }
  return out;
}

// A ring's queue counters at one sample.
struct Queues {
  int64_t in_flight, sq, cq;
  bool operator==(const Queues &o) const {
    return std::tie(in_flight, sq, cq) == std::tie(o.in_flight, o.sq, o.cq);
  }
};
inline std::ostream &operator<<(std::ostream &os, const Queues &q) {
  return os << "{in_flight " << q.in_flight << ", sq " << q.sq << ", cq " << q.cq << "}";
}

inline int64_t signed_arg(const mt::FxtRecord &r, const std::string &name) {
  return static_cast<int64_t>(arg(r, name));
}

// The samples of counter NAME ("ring 0x... queues"), as Perfetto reads
// them: a sample carries the values that changed, and each series holds
// its value until its next sample.
inline std::vector<Queues> queue_samples(const Trace &t, const std::string &name) {
  std::vector<Queues> out;
  Queues now{};
  for (const auto &r : t.records)
    if (r.type == 4 && r.event_type == 1 && r.name == name) {
      for (auto [arg_name, value] : {std::pair{"in_flight", &now.in_flight},
                                     std::pair{"sq", &now.sq}, std::pair{"cq", &now.cq}})
        if (find_arg(r, arg_name))
          *value = signed_arg(r, arg_name);
      out.push_back(now);
    }
  return out;
}

// RING ("ring 0x...") has its queue counters at the entry and exit of
// each of its ENTERS, and once more where it left the trace (closed, or
// its process exited) if they changed since: with nothing in flight or
// left in its queues, for a program that waited for and reaped all it
// submitted.
inline void expect_queues_at_each_enter_and_none_left(const Trace &t, const std::string &ring,
                                                      size_t enters) {
  auto samples = queue_samples(t, ring + " queues");
  EXPECT_GE(samples.size(), 2 * enters) << ring;
  EXPECT_LE(samples.size(), 2 * enters + 1) << ring;
  if (!samples.empty()) {
    EXPECT_EQ(samples.back(), (Queues{0, 0, 0})) << ring << ", at the end";
  }
}

// The number before `what` in uring's summary ("N requests completed").
inline uint64_t summary_count(const std::string &err, const std::string &what) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex("(\\d+) " + what)))
    return 0;
  return std::stoull(m[1]);
}

// The summary's findings by name, from its JSON data.
inline std::map<std::string, nlohmann::json> findings_of(const Result &r) {
  auto summary = data_of_type(json_lines(r.out), "uring_summary");
  EXPECT_TRUE(summary.is_object() && summary["findings"].is_array()) << r;
  std::map<std::string, nlohmann::json> out;
  if (summary.is_object() && summary["findings"].is_array())
    for (const auto &f : summary["findings"])
      out[f["name"].get<std::string>()] = f;
  return out;
}

inline std::set<uint64_t> Trace::pids() const {
  std::set<uint64_t> out;
  for (const auto &r : records) {
    if (r.type == 4)
      out.insert(r.pid);
    if (r.type == 7)
      out.insert(r.object_type == 1 ? r.koid : arg(r, "process"));
  }
  return out;
}

// What a check report says each probe uses: "FILE:LINE: PROBE" lines,
// but fentry's and fexit's when `without_fentry`.
inline std::vector<std::string> probes_used(const std::string &report,
                                            bool without_fentry = false) {
  std::vector<std::string> used;
  static const std::regex line(R"(^\S+:\d+: \S+.*$)"), fentry(R"(^\S+:\d+: f(entry|exit):.*)");
  for (const auto &l : lines(report))
    if (std::regex_match(l, line) && !(without_fentry && std::regex_match(l, fentry)))
      used.push_back(l);
  return used;
}

// The trace in `file`, which must pass Perfetto's import rules.
inline Trace valid_trace(const std::string &file) {
  auto problems = mt::testing::perfetto_problems_in_file(file);
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  Trace t;
  t.records = mt::read_fxt(mt::gunzip_if_gzipped(read_file(file)));
  return t;
}

// Runs `script` (uring, or a script that requires it) on `command`
// (moontrace options first, then the script's), checks it lost nothing and
// the trace is valid, and returns the trace and what moontrace printed.
inline std::pair<Trace, Result> run_traced(const std::string &script, const std::string &command,
                                           std::vector<std::string> options = {},
                                           std::vector<std::string> script_options = {}) {
  TempDir dir;
  std::string file = dir.file("uring.fxt");
  std::vector<std::string> argv = {"-o", file, "-c", command};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  argv.insert(argv.end(), script_options.begin(), script_options.end());
  auto r = run(mt(argv), 60s);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, ", 0 lost")) << r;
  return {valid_trace(file), std::move(r)};
}

// uring.lua on `command`: see run_traced.
inline std::pair<Trace, Result> run_uring(const std::string &command,
                                          std::vector<std::string> options = {},
                                          std::vector<std::string> script_options = {}) {
  return run_traced("uring", command, std::move(options), std::move(script_options));
}

// Runs uring.lua on `command` with script options `extra`; the trace.
inline Trace trace_of(const std::string &command, std::vector<std::string> extra = {}) {
  return run_uring(command, {}, std::move(extra)).first;
}

}  // namespace e2e
