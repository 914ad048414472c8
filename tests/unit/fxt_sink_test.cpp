// The FXT sink as a stage: record bytes laid out by hand in, an FXT file
// out, read back with read_fxt and checked against Perfetto's import rules
// (tests/fxt_validator.h). No BPF, no Lua: declarations, generated probes
// and record layouts are built here.
// Over 500 lines: one test per drawing rule, each with records laid out by hand.
#include "trace/fxt_sink.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "codegen/c_generator.h"
#include "common/declaration.h"
#include "run/record_decoder.h"
#include "tests/fxt_validator.h"
#include "tests/record_layout.h"
#include "trace/fxt_format.h"
#include "trace/fxt_reader.h"
#include "trace/open_flows.h"

namespace mt {
namespace {

using mt::testing::Layout;
using mt::testing::perfetto_problems;

using namespace mt::fxt;  // event and argument types as read_fxt reports them

constexpr uint64_t kTrackBit = 1ull << 63;
// Beyond any pid_max: no such thread can exist, so /proc has no name for it.
constexpr uint64_t kFakePid = 0x7fffff00, kFakeTid = 0x7fffff01, kFakeTid2 = 0x7fffff02;

uint64_t self_pid() {
  return static_cast<uint64_t>(::getpid());
}
uint64_t self_tid() {
  return static_cast<uint64_t>(::gettid());
}

std::string comm_of(uint64_t pid, uint64_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// The bytes of one record of a layout.
class Rec {
 public:
  explicit Rec(const RecordLayout &layout) : layout_(layout), bytes_(layout.size, '\0') {}
  Rec &at(uint64_t ts, uint64_t pid, uint64_t tid) {
    return set("__ts", ts).set("__task", pid << 32 | tid);
  }
  Rec &set(const std::string &name, uint64_t v) {
    const RecordField &f = find(name);
    std::memcpy(&bytes_[f.offset], &v, std::min<uint32_t>(f.size, 8));
    return *this;
  }
  Rec &text(const std::string &name, const std::string &s) {
    const RecordField &f = find(name);
    std::memcpy(&bytes_[f.offset], s.data(), std::min<size_t>(s.size(), f.size));
    return *this;
  }
  const void *data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  const RecordField &find(const std::string &name) const {
    if (const RecordField *f = mt::testing::field_named(layout_, name))
      return *f;
    ADD_FAILURE() << "no field " << name;
    return layout_.hidden[0];
  }
  RecordLayout layout_;
  std::string bytes_;
};

// A struct mt_thread_name record: {u32 probe; u32 pid; u32 tid; char comm[16]}.
std::string thread_name_record(uint32_t probe, uint64_t pid, uint64_t tid,
                               const std::string &comm) {
  std::string bytes(28, '\0');
  uint32_t p = static_cast<uint32_t>(pid), t = static_cast<uint32_t>(tid);
  std::memcpy(&bytes[0], &probe, 4);
  std::memcpy(&bytes[4], &p, 4);
  std::memcpy(&bytes[8], &t, 4);
  std::memcpy(&bytes[12], comm.data(), std::min<size_t>(comm.size(), 16));
  return bytes;
}

DrawDecl draw(DrawDecl::Kind kind, const std::string &name, std::vector<std::string> args = {}) {
  DrawDecl d;
  d.kind = kind;
  d.name = name;
  d.args = std::move(args);
  return d;
}

DrawDecl with_flow(DrawDecl d, const std::string &capture, DrawDecl::Flow point) {
  d.flow = capture;
  d.flow_point = point;
  return d;
}

// A slice holding a point of the flow in __d0_flow; `timed`: drawn from
// __d0_duration before the record's time, else 1 ns.
DrawDecl flow_slice(const std::string &name, DrawDecl::Flow point, bool timed = false) {
  DrawDecl d = with_flow(draw(DrawDecl::Kind::Slice, name), "__d0_flow", point);
  if (timed)
    d.duration = "__d0_duration";
  return d;
}

struct ProbeSpec {
  RecordLayout layout;
  std::vector<DrawDecl> draws;
};

// Three probes drawing `kind` that begin, step and end a flow keyed by
// __d0_flow: probe 0 begins, 1 steps, 2 ends.
std::vector<ProbeSpec> flow_probes(const RecordLayout &layout, DrawDecl::Kind kind,
                                   const std::string &begin, const std::string &step,
                                   const std::string &end) {
  return {{layout, {with_flow(draw(kind, begin), "__d0_flow", DrawDecl::Flow::Begin)}},
          {layout, {with_flow(draw(kind, step), "__d0_flow", DrawDecl::Flow::Step)}},
          {layout, {with_flow(draw(kind, end), "__d0_flow", DrawDecl::Flow::End)}}};
}

std::vector<const FxtRecord *> events(const std::vector<FxtRecord> &records,
                                      std::vector<int> types = {}) {
  std::vector<const FxtRecord *> out;
  for (const auto &r : records)
    if (r.type == 4 &&
        (types.empty() || std::find(types.begin(), types.end(), r.event_type) != types.end()))
      out.push_back(&r);
  return out;
}

// Kernel objects of `object_type` (1 process, 2 thread) for `koid`, in file order.
std::vector<const FxtRecord *> objects(const std::vector<FxtRecord> &records, int object_type,
                                       uint64_t koid) {
  std::vector<const FxtRecord *> out;
  for (const auto &r : records)
    if (r.type == 7 && r.object_type == object_type && r.koid == koid)
      out.push_back(&r);
  return out;
}

const FxtArgValue *arg(const FxtRecord &r, const std::string &name) {
  for (const auto &a : r.args)
    if (a.name == name)
      return &a;
  return nullptr;
}

// The 'process' koid of a thread object, or ~0 without one.
uint64_t process_of(const FxtRecord &thread) {
  const FxtArgValue *a = arg(thread, "process");
  return a && a->type == kArgKoid ? a->u : ~0ull;
}

class FxtSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int serial = 0;
    path_ = ::testing::TempDir() + "/fxt_sink_test_" + std::to_string(::getpid()) + "_" +
            std::to_string(serial++) + ".fxt";
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // Plans `sink` with one generated probe per spec. The declaration lists
  // them in reverse, so that only decl_id links a probe to its draws.
  void plan(FxtSink &sink, const std::vector<ProbeSpec> &specs) {
    Declaration decl;
    GeneratedProgram generated;
    std::vector<std::optional<RecordLayout>> layouts;
    size_t n = specs.size();
    decl.probes.resize(n);
    for (size_t i = 0; i < n; i++) {
      int decl_id = static_cast<int>(n - 1 - i);
      ProbeDecl &p = decl.probes[decl_id];
      p.id = decl_id;
      p.alternatives = {"tracepoint:test:p" + std::to_string(i)};
      p.draws = specs[i].draws;
      GeneratedProbe g;
      g.decl_id = decl_id;
      g.program = "mt_probe_" + std::to_string(i);
      g.record = "mt_rec_" + std::to_string(i);
      generated.probes.push_back(g);
      layouts.push_back(specs[i].layout);
    }
    sink.plan(decl, generated, layouts);
    for (size_t i = 0; i < n; i++)
      EXPECT_EQ(sink.draws(static_cast<uint32_t>(i)), !specs[i].draws.empty()) << i;
  }

  // A record in time order, drawn at once.
  static void draw_now(FxtSink &sink, uint32_t probe, const Rec &rec) {
    sink.draw(probe, static_cast<const unsigned char *>(rec.data()), rec.size());
  }
  // Records fed out of order are held here and drawn in time order by
  // release(), as the reorder window (tested on its own) does.
  void feed(FxtSink &sink, uint32_t probe, const Rec &rec) {
    uint64_t ts = sink.arrived(probe, rec.data(), rec.size());
    auto *bytes = static_cast<const unsigned char *>(rec.data());
    if (ts != UINT64_MAX)
      fed_.push_back({ts, probe, std::vector<unsigned char>(bytes, bytes + rec.size())});
  }
  // Draws the records fed so far that are older than `watermark`, oldest
  // first, equal times in the order fed.
  void release(FxtSink &sink, uint64_t watermark) {
    std::stable_sort(fed_.begin(), fed_.end(),
                     [](const Fed &a, const Fed &b) { return a.ts < b.ts; });
    size_t n = 0;
    for (; n < fed_.size() && fed_[n].ts < watermark; n++)
      sink.draw(fed_[n].probe, fed_[n].bytes.data(), fed_[n].bytes.size());
    fed_.erase(fed_.begin(), fed_.begin() + static_cast<std::ptrdiff_t>(n));
  }

  std::vector<FxtRecord> read() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return read_fxt(bytes.str());
  }

  // Reads the finished trace and expects Perfetto to import it cleanly.
  std::vector<FxtRecord> read_clean() const {
    auto records = read();
    auto problems = perfetto_problems(records);
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
    return records;
  }

  std::string path_;
  struct Fed {
    uint64_t ts;
    uint32_t probe;
    std::vector<unsigned char> bytes;
  };
  std::vector<Fed> fed_;
};

TEST_F(FxtSinkTest, OpenFailsOnAnUnwritablePath) {
  EXPECT_ANY_THROW(FxtSink("/nonexistent-dir/x/trace.fxt"));
}

TEST_F(FxtSinkTest, DrawsInstantsWithTheirTimeThreadAndArgs) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}});
    // As from several per-CPU buffers: out of order, two at the same time.
    for (auto [ts, n] : std::vector<std::pair<uint64_t, uint64_t>>{
             {300, 3}, {100, 1}, {200, 20}, {50, 0}, {200, 21}, {250, 25}})
      feed(sink, 0, Rec(layout).at(ts, pid, tid).set("n", n));
    release(sink, ~0ull);
    EXPECT_EQ(sink.events(), 6u);
  }
  auto records = read_clean();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0].type, 1);
  EXPECT_EQ(records[0].ticks_per_second, 1000000000u);
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 6u);
  std::vector<std::pair<uint64_t, uint64_t>> got;
  for (const auto *e : drawn) {
    EXPECT_EQ(e->event_type, kInstant);
    EXPECT_EQ(e->name, "tick");
    EXPECT_EQ(e->category, "moontrace");
    EXPECT_EQ(e->pid, pid);
    EXPECT_EQ(e->tid, tid);
    ASSERT_EQ(e->args.size(), 1u);
    got.emplace_back(e->ts, e->args[0].u);
  }
  // Equal times keep the order they were fed in.
  EXPECT_EQ(got, (std::vector<std::pair<uint64_t, uint64_t>>{
                     {50, 0}, {100, 1}, {200, 20}, {200, 21}, {250, 25}, {300, 3}}));
}

// draw() takes only records of a drawing probe at least as long as its layout.
TEST_F(FxtSinkTest, DrawIgnoresShortRecordsAndProbesWithoutDrawings) {
  auto layout = Layout().field("n", 8, FieldKind::Unsigned).get();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}, {layout, {}}});
    Rec rec = Rec(layout).at(10, self_pid(), self_tid()).set("n", 1);
    auto *bytes = static_cast<const unsigned char *>(rec.data());
    sink.draw(0, bytes, rec.size() - 1);
    sink.draw(1, bytes, rec.size());
    sink.draw(7, bytes, rec.size());
    EXPECT_EQ(sink.events(), 0u);
    sink.draw(0, bytes, rec.size());
    EXPECT_EQ(sink.events(), 1u);
  }
  EXPECT_EQ(events(read_clean()).size(), 1u);
}

TEST_F(FxtSinkTest, ProbesAreFoundThroughTheirDeclIdAndDrawEachOfTheirDraws) {
  auto a = Layout().field("x", 8, FieldKind::Unsigned).get();
  auto b = Layout().field("y", 4, FieldKind::Unsigned).field("z", 4, FieldKind::Unsigned).get();
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{a, {draw(DrawDecl::Kind::Instant, "a", {"x"})}},
                {b,
                 {draw(DrawDecl::Kind::Instant, "b", {"z", "y"}),
                  draw(DrawDecl::Kind::Counter, "b-counter", {"y"})}},
                {a, {}}});
    EXPECT_FALSE(sink.draws(3));
    draw_now(sink, 0, Rec(a).at(10, pid, tid).set("x", 4));
    draw_now(sink, 1, Rec(b).at(20, pid, tid).set("y", 5).set("z", 6));
    EXPECT_EQ(sink.events(), 3u);
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 3u);
  EXPECT_EQ(drawn[0]->name, "a");
  ASSERT_EQ(drawn[0]->args.size(), 1u);
  EXPECT_EQ(drawn[0]->args[0].name, "x");
  EXPECT_EQ(drawn[0]->args[0].u, 4u);
  EXPECT_EQ(drawn[1]->name, "b");
  EXPECT_EQ(drawn[1]->event_type, kInstant);
  ASSERT_EQ(drawn[1]->args.size(), 2u);  // in the draw's order
  EXPECT_EQ(drawn[1]->args[0].name, "z");
  EXPECT_EQ(drawn[1]->args[0].u, 6u);
  EXPECT_EQ(drawn[1]->args[1].name, "y");
  EXPECT_EQ(drawn[1]->args[1].u, 5u);
  EXPECT_EQ(drawn[2]->name, "b-counter");
  EXPECT_EQ(drawn[2]->event_type, kCounter);
  EXPECT_EQ(drawn[2]->ts, 20u);
  ASSERT_EQ(drawn[2]->args.size(), 1u);
  EXPECT_EQ(drawn[2]->args[0].name, "y");
  EXPECT_EQ(drawn[2]->args[0].type, kArgUint32);
  EXPECT_EQ(drawn[2]->args[0].u, 5u);
}

TEST_F(FxtSinkTest, ArgumentsKeepTheirKinds) {
  auto layout = Layout()
                    .field("i32", 4, FieldKind::Signed)
                    .field("i16", 2, FieldKind::Signed)
                    .field("i64", 8, FieldKind::Signed)
                    .field("u64", 8, FieldKind::Unsigned)
                    .field("ptr", 8, FieldKind::Pointer)
                    .field("flag", 1, FieldKind::Bool)
                    .field("name", 16, FieldKind::String)
                    .field("full", 4, FieldKind::String)
                    .get();
  {
    FxtSink sink(path_);
    plan(sink, {{layout,
                 {draw(DrawDecl::Kind::Instant, "kinds",
                       {"i32", "i16", "i64", "u64", "ptr", "flag", "name", "full", "absent"})}}});
    draw_now(sink, 0,
             Rec(layout)
                 .at(10, self_pid(), self_tid())
                 .set("i32", static_cast<uint32_t>(-5))
                 .set("i16", 0xfffe)
                 .set("i64", static_cast<uint64_t>(-(1ll << 40)))
                 .set("u64", 1ull << 40)
                 .set("ptr", 0xffff888100002000ull)
                 .set("flag", 1)
                 .text("name", "hello")
                 .text("full", "abcd"));  // no terminating zero: cut at its size
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 1u);
  const FxtRecord &e = *drawn[0];
  ASSERT_EQ(e.args.size(), 8u);  // a name the layout lacks is left out
  EXPECT_EQ(e.args[0].type, kArgInt32);
  EXPECT_EQ(e.args[0].i, -5);
  EXPECT_EQ(e.args[1].type, kArgInt32);
  EXPECT_EQ(e.args[1].i, -2);
  EXPECT_EQ(e.args[2].type, kArgInt64);
  EXPECT_EQ(e.args[2].i, -(1ll << 40));
  EXPECT_EQ(e.args[3].type, kArgUint64);
  EXPECT_EQ(e.args[3].u, 1ull << 40);
  EXPECT_EQ(e.args[4].type, kArgPointer);
  EXPECT_EQ(e.args[4].u, 0xffff888100002000ull);
  EXPECT_EQ(e.args[5].type, kArgBool);
  EXPECT_EQ(e.args[5].u, 1u);
  EXPECT_EQ(e.args[6].type, kArgString);
  EXPECT_EQ(e.args[6].text, "hello");
  EXPECT_EQ(e.args[7].type, kArgString);
  EXPECT_EQ(e.args[7].text, "abcd");
}

TEST_F(FxtSinkTest, ArgumentsBeyondFifteenAreDropped) {
  Layout l;
  std::vector<std::string> names;
  for (int i = 0; i < 17; i++) {
    names.push_back(std::string(1, 'a').append(std::to_string(i)));
    l.field(names.back(), 4, FieldKind::Unsigned);
  }
  auto layout = l.get();
  {
    FxtSink sink(path_);
    plan(sink, {{layout,
                 {draw(DrawDecl::Kind::Instant, "many", names),
                  draw(DrawDecl::Kind::Slice, "many-slice", names)}}});
    Rec rec(layout);
    rec.at(1000, self_pid(), self_tid());
    for (int i = 0; i < 17; i++)
      rec.set(names[i], 100 + i);
    draw_now(sink, 0, rec);
  }
  auto records = read_clean();  // read_fxt itself refuses more than 15
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 2u);
  for (const auto *e : drawn) {
    ASSERT_EQ(e->args.size(), 15u) << e->name;
    for (int i = 0; i < 15; i++) {
      EXPECT_EQ(e->args[i].name, names[i]);
      EXPECT_EQ(e->args[i].u, 100u + i);
    }
  }
}

TEST_F(FxtSinkTest, SlicesStartTheirDurationBeforeTheirTime) {
  auto layout = Layout().hidden("__d0_duration").get();
  DrawDecl timed = draw(DrawDecl::Kind::Slice, "timed");
  timed.duration = "__d0_duration";
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {timed}}, {layout, {draw(DrawDecl::Kind::Slice, "untimed")}}});
    draw_now(sink, 0, Rec(layout).at(1000, pid, tid).set("__d0_duration", 300));
    draw_now(sink, 0, Rec(layout).at(2000, pid, tid).set("__d0_duration", 0));
    draw_now(sink, 1, Rec(layout).at(3000, pid, tid));
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 3u);
  for (const auto *e : drawn)
    EXPECT_EQ(e->event_type, kComplete);
  EXPECT_EQ(drawn[0]->name, "timed");
  EXPECT_EQ(drawn[0]->ts, 700u);
  EXPECT_EQ(drawn[0]->extra, 1000u);  // ends at the record's time
  EXPECT_EQ(drawn[1]->ts, 2000u);     // no duration: still 1 ns long
  EXPECT_EQ(drawn[1]->extra, 2001u);
  EXPECT_EQ(drawn[2]->name, "untimed");  // no duration field: 1 ns ending at its time
  EXPECT_EQ(drawn[2]->ts, 2999u);
  EXPECT_EQ(drawn[2]->extra, 3000u);
}

TEST_F(FxtSinkTest, BeginAndEndNestOnTheThread) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Begin, "outer", {"n"})}},
                {layout, {draw(DrawDecl::Kind::End, "outer", {"n"})}}});
    draw_now(sink, 0, Rec(layout).at(100, pid, tid).set("n", 1));
    draw_now(sink, 1, Rec(layout).at(200, pid, tid).set("n", 2));
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 2u);
  EXPECT_EQ(drawn[0]->event_type, kBegin);
  EXPECT_EQ(drawn[0]->ts, 100u);
  EXPECT_EQ(drawn[1]->event_type, kEnd);
  EXPECT_EQ(drawn[1]->ts, 200u);
}

// Flow ids in the trace are the sink's, not the script's keys.
TEST_F(FxtSinkTest, FlowIdsAreRemappedAndOrphanPointsDropped) {
  auto layout = Layout().hidden("__d0_flow").get();
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, flow_probes(layout, DrawDecl::Kind::Instant, "submit", "hop", "done"));
    auto point = [&](uint32_t probe, uint64_t ts, uint64_t key) {
      draw_now(sink, probe, Rec(layout).at(ts, pid, tid).set("__d0_flow", key));
    };
    point(1, 100, 7);  // a step, never begun: dropped
    point(2, 110, 7);  // an end, never begun: dropped
    point(0, 200, 7);  // begins: id A
    point(0, 250, 9);  // another key: id C
    point(0, 300, 7);  // begins again while open (its end lost): a fresh id B
    point(1, 400, 7);  // steps B
    point(2, 500, 7);  // ends B
    point(1, 600, 7);  // after the end: dropped
    point(2, 700, 9);  // ends C
    EXPECT_EQ(sink.orphan_flow_points(), 3u);
    EXPECT_EQ(sink.events(), 9u);  // the slices are drawn all the same
  }
  auto records = read_clean();
  auto flows = events(records, {kFlowBegin, kFlowStep, kFlowEnd});
  ASSERT_EQ(flows.size(), 6u);
  std::vector<std::pair<int, uint64_t>> kinds;
  for (const auto *f : flows) {
    kinds.emplace_back(f->event_type, f->ts);
    EXPECT_EQ(f->pid, pid);
    EXPECT_EQ(f->tid, tid);
  }
  EXPECT_EQ(kinds, (std::vector<std::pair<int, uint64_t>>{{kFlowBegin, 200},
                                                          {kFlowBegin, 250},
                                                          {kFlowBegin, 300},
                                                          {kFlowStep, 400},
                                                          {kFlowEnd, 500},
                                                          {kFlowEnd, 700}}));
  uint64_t a = flows[0]->extra, c = flows[1]->extra, b = flows[2]->extra;
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  EXPECT_EQ(flows[3]->extra, b);  // the step after the second begin
  EXPECT_EQ(flows[4]->extra, b);
  EXPECT_EQ(flows[5]->extra, c);

  // Instants holding a flow point are 1-ns slices, so the point binds.
  auto slices = events(records, {kInstant, kComplete});
  ASSERT_EQ(slices.size(), 9u);
  for (const auto *s : slices) {
    EXPECT_EQ(s->event_type, kComplete) << s->name << " at " << s->ts;
    EXPECT_EQ(s->extra, s->ts + 1);
  }
}

TEST_F(FxtSinkTest, FlowPointsAreAtTheirSlicesStartAndJoinFromAnyProcess) {
  auto layout = Layout().hidden("__d0_duration").hidden("__d0_flow").get();
  DrawDecl begin = flow_slice("submit", DrawDecl::Flow::Begin, true);
  DrawDecl end = flow_slice("complete", DrawDecl::Flow::End);
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {begin}}, {layout, {end}}});
    draw_now(sink, 0,
             Rec(layout)
                 .at(1000, pid, tid)
                 .set("__d0_duration", 400)
                 .set("__d0_flow", 0xffff888100000000ull));
    draw_now(sink, 1,
             Rec(layout).at(5000, kFakePid, kFakeTid).set("__d0_flow", 0xffff888100000000ull));
    // The end is in another process (a kworker, say): it joins the flow.
    EXPECT_EQ(sink.orphan_flow_points(), 0u);
  }
  auto records = read_clean();
  auto flows = events(records, {kFlowBegin, kFlowStep, kFlowEnd});
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0]->event_type, kFlowBegin);
  EXPECT_EQ(flows[0]->ts, 600u);
  EXPECT_EQ(flows[1]->event_type, kFlowEnd);
  EXPECT_EQ(flows[1]->pid, kFakePid);
  EXPECT_EQ(flows[1]->extra, flows[0]->extra);
}

// A slice is drawn at its end: its flow point, at its start, may come
// after its flow's end (a worker's slice around the request's completion).
// It joins the flow if it came before the end; later, it is an orphan.
TEST_F(FxtSinkTest, FlowPointOfASliceDrawnAfterItsFlowEndedJoinsIt) {
  auto layout = Layout().hidden("__d0_duration").hidden("__d0_flow").get();
  DrawDecl begin = flow_slice("submit", DrawDecl::Flow::Begin);
  DrawDecl step = flow_slice("issue", DrawDecl::Flow::Step, true);
  DrawDecl end = flow_slice("complete", DrawDecl::Flow::End);
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {begin}}, {layout, {step}}, {layout, {end}}});
    auto at = [&](uint32_t probe, uint64_t ts, uint64_t thread, uint64_t duration) {
      draw_now(sink, probe,
               Rec(layout).at(ts, pid, thread).set("__d0_duration", duration).set("__d0_flow", 7));
    };
    at(0, 100, tid, 0);         // begins
    at(2, 500, kFakeTid, 0);    // ends, inside the worker's slice
    at(1, 600, kFakeTid, 300);  // the worker's slice [300, 600]: its step joins
    at(1, 900, kFakeTid, 100);  // a slice [800, 900] after the end: an orphan
    EXPECT_EQ(sink.orphan_flow_points(), 1u);
  }
  auto records = read_clean();
  auto flows = events(records, {kFlowBegin, kFlowStep, kFlowEnd});
  ASSERT_EQ(flows.size(), 3u);
  std::map<uint64_t, int> kind_at;
  for (const auto *f : flows) {
    kind_at[f->ts] = f->event_type;
    EXPECT_EQ(f->extra, flows[0]->extra);
  }
  EXPECT_EQ(kind_at,
            (std::map<uint64_t, int>{{99, kFlowBegin}, {300, kFlowStep}, {499, kFlowEnd}}));
}

TEST_F(FxtSinkTest, FlowsAcrossThreadsOfAProcessAreCleanForPerfetto) {
  auto layout = Layout().hidden("__d0_flow").get();
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, flow_probes(layout, DrawDecl::Kind::Slice, "submit", "hop", "complete"));
    for (uint64_t i = 0; i < 50; i++) {
      uint64_t key = i % 4, base = 1000 + i * 100;
      draw_now(sink, 0, Rec(layout).at(base, pid, tid).set("__d0_flow", key));
      draw_now(sink, 1, Rec(layout).at(base + 30, pid, kFakeTid).set("__d0_flow", key));
      if (i % 3)  // some ends lost: the key begins again while open
        draw_now(sink, 2, Rec(layout).at(base + 60, pid, kFakeTid2).set("__d0_flow", key));
    }
  }
  read_clean();
}

// Perfetto drops a slice that starts inside another on its thread and
// ends after it: such a slice is drawn in a lane of the process's async
// track, and its flow point on a 1-ns slice of its own on the thread.
TEST_F(FxtSinkTest, ASliceThatWouldOverlapOnItsThreadGoesInAnAsyncLane) {
  auto layout = Layout().hidden("__d0_duration").hidden("__d0_flow").get();
  DrawDecl hop = flow_slice("submit", DrawDecl::Flow::Begin);
  DrawDecl request = flow_slice("request", DrawDecl::Flow::End, true);
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {hop}}, {layout, {request}}});
    // Two requests in flight, each with a hop at its submit and drawn at
    // its end from its submit: the second starts inside the first and
    // ends after it.
    draw_now(sink, 0, Rec(layout).at(100, pid, tid).set("__d0_flow", 1));
    draw_now(sink, 0, Rec(layout).at(200, pid, tid).set("__d0_flow", 2));
    draw_now(sink, 1, Rec(layout).at(500, pid, tid).set("__d0_duration", 400).set("__d0_flow", 1));
    draw_now(sink, 1, Rec(layout).at(600, pid, tid).set("__d0_duration", 400).set("__d0_flow", 2));
    EXPECT_EQ(sink.lane_slices(), 1u);
    EXPECT_EQ(sink.orphan_flow_points(), 0u);
  }
  auto records = read_clean();
  auto begins = events(records, {kAsyncBegin}), ends = events(records, {kAsyncEnd});
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(begins[0]->name, "request");
  EXPECT_EQ(begins[0]->ts, 200u);
  EXPECT_EQ(ends[0]->ts, 600u);
  EXPECT_EQ(ends[0]->extra, begins[0]->extra);
  // The first on the thread; the second's flow point on a 1-ns slice of
  // its own there, nested in the first.
  std::vector<std::pair<uint64_t, uint64_t>> requests;
  for (const auto *e : events(records, {kComplete}))
    if (e->name == "request")
      requests.push_back({e->ts, e->extra});
  EXPECT_EQ(requests, (std::vector<std::pair<uint64_t, uint64_t>>{{100, 500}, {200, 201}}));
  auto flows = events(records, {kFlowEnd});
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0]->ts, 100u);
  EXPECT_EQ(flows[1]->ts, 200u);
}

TEST_F(FxtSinkTest, AsyncSlicesTakeTheFirstFreeLane) {
  auto layout = Layout().hidden("__d0_duration").get();
  DrawDecl request = draw(DrawDecl::Kind::Slice, "request");
  request.duration = "__d0_duration";
  request.async_track = true;
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {request}}});
    for (uint64_t end : {500, 600, 900})
      draw_now(sink, 0, Rec(layout).at(end, pid, tid).set("__d0_duration", 300));
    EXPECT_EQ(sink.lane_slices(), 0u);  // asked for: not counted
  }
  auto records = read_clean();
  auto begins = events(records, {kAsyncBegin});
  ASSERT_EQ(begins.size(), 3u);
  EXPECT_NE(begins[0]->extra, begins[1]->extra);
  EXPECT_EQ(begins[2]->extra, begins[0]->extra);  // [600, 900] after [200, 500]
  EXPECT_TRUE(events(records, {kComplete}).empty());
}

// A flow point drawn with an end must bind to the slice the end closes:
// Perfetto drops a point with no open slice on its thread.
TEST_F(FxtSinkTest, FlowPointOfAnEndBindsToTheSliceItCloses) {
  auto layout = Layout().hidden("__d0_flow").get();
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink,
         {{layout,
           {with_flow(draw(DrawDecl::Kind::Begin, "req"), "__d0_flow", DrawDecl::Flow::Begin)}},
          {layout,
           {with_flow(draw(DrawDecl::Kind::End, "req"), "__d0_flow", DrawDecl::Flow::End)}}});
    draw_now(sink, 0, Rec(layout).at(100, pid, tid).set("__d0_flow", 1));
    draw_now(sink, 1, Rec(layout).at(200, pid, tid).set("__d0_flow", 1));
    EXPECT_EQ(sink.orphan_flow_points(), 0u);
  }
  auto records = read_clean();
  EXPECT_EQ(events(records, {kFlowBegin}).size(), 1u);
  EXPECT_EQ(events(records, {kFlowEnd}).size(), 1u);
}

TEST_F(FxtSinkTest, TracksKeyedByAValueAreNamedThreadsOfTheProcess) {
  auto layout = Layout().hidden("__d0_track").get();
  DrawDecl d = draw(DrawDecl::Kind::Instant, "on-ring");
  d.track = "__d0_track";
  d.track_name = "ring";
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {d}}});
    draw_now(sink, 0, Rec(layout).at(10, pid, tid).set("__d0_track", 0xabc));
    draw_now(sink, 0, Rec(layout).at(20, pid, tid).set("__d0_track", 0x10));
    draw_now(sink, 0, Rec(layout).at(30, pid, tid).set("__d0_track", 0xabc));
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 3u);
  // One synthetic thread per key, each named once after its key.
  EXPECT_EQ(drawn[0]->tid, drawn[2]->tid);
  EXPECT_NE(drawn[0]->tid, drawn[1]->tid);
  for (const auto *e : drawn) {
    EXPECT_EQ(e->pid, pid);
    EXPECT_NE(e->tid & kTrackBit, 0u);
  }
  auto ring = objects(records, 2, drawn[0]->tid);
  ASSERT_EQ(ring.size(), 1u);  // named once
  EXPECT_EQ(ring[0]->name, "ring 0xabc");
  EXPECT_EQ(process_of(*ring[0]), pid);
  auto other = objects(records, 2, drawn[1]->tid);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0]->name, "ring 0x10");
  EXPECT_EQ(process_of(*other[0]), pid);
  // The recording thread and its process are named as well.
  auto self = objects(records, 2, tid);
  ASSERT_EQ(self.size(), 1u);
  EXPECT_EQ(self[0]->name, comm_of(pid, tid));
  ASSERT_EQ(objects(records, 1, pid).size(), 1u);
  EXPECT_EQ(objects(records, 1, pid)[0]->name, comm_of(pid, pid));
}

// A drawing with `when` is drawn from the records whose byte is not 0; the
// record's other drawings are drawn regardless.
TEST_F(FxtSinkTest, DrawingsWithWhenAreDrawnOnlyWhereItHolds) {
  auto layout = Layout().field("n", 8, FieldKind::Unsigned).hidden("__d1_when", 1).get();
  DrawDecl always = draw(DrawDecl::Kind::Instant, "always", {"n"});
  DrawDecl sometimes = draw(DrawDecl::Kind::Instant, "sometimes", {"n"});
  sometimes.when = "__d1_when";
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {always, sometimes}}});
    for (uint64_t n = 1; n <= 4; n++)
      draw_now(sink, 0, Rec(layout).at(n * 10, pid, tid).set("n", n).set("__d1_when", n % 2));
  }
  auto records = read_clean();
  std::vector<std::pair<std::string, uint64_t>> drawn;
  for (const auto *e : events(records))
    drawn.emplace_back(e->name, arg(*e, "n")->u);
  EXPECT_EQ(drawn, (std::vector<std::pair<std::string, uint64_t>>{{"always", 1},
                                                                  {"sometimes", 1},
                                                                  {"always", 2},
                                                                  {"always", 3},
                                                                  {"sometimes", 3},
                                                                  {"always", 4}}));
}

// An argument with names is shown by the name of its value, where it has
// one, and as its number where not.
TEST_F(FxtSinkTest, NamedValuesAreWrittenAsTheirNames) {
  auto layout = Layout().field("op", 1, FieldKind::Unsigned).get();
  DrawDecl d = draw(DrawDecl::Kind::Instant, "submit", {"op"});
  d.value_names["op"] = {"NOP", "", "WRITEV"};
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {d}}});
    for (uint64_t op : {0, 1, 2, 3})
      draw_now(sink, 0, Rec(layout).at(10 + op, pid, tid).set("op", op));
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 4u);
  EXPECT_EQ(arg(*drawn[0], "op")->text, "NOP");
  EXPECT_EQ(arg(*drawn[1], "op")->u, 1u);
  EXPECT_EQ(arg(*drawn[2], "op")->text, "WRITEV");
  EXPECT_EQ(arg(*drawn[3], "op")->u, 3u);
}

// A track in a group is a thread of the group's own process, whatever task
// drew on it, named by its label: a block device's completions, drawn in
// interrupts of whichever task ran, all on the device's track.
TEST_F(FxtSinkTest, GroupedTracksAreThreadsOfTheGroupsProcessNamedByTheirLabel) {
  auto layout = Layout().hidden("__d0_label", 16, FieldKind::String).hidden("__d1_label").get();
  DrawDecl by_name = draw(DrawDecl::Kind::Instant, "complete");
  by_name.track_label = "__d0_label";
  by_name.track_group = "block devices";
  DrawDecl by_number = draw(DrawDecl::Kind::Instant, "issue");
  by_number.track_label = "__d1_label";
  by_number.track_name = "dev";
  by_number.track_group = "block devices";
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {by_name, by_number}}});
    draw_now(sink, 0, Rec(layout).at(10, pid, tid).text("__d0_label", "vda").set("__d1_label", 7));
    draw_now(sink, 0,
             Rec(layout).at(20, kFakePid, kFakeTid).text("__d0_label", "vda").set("__d1_label", 7));
    draw_now(sink, 0, Rec(layout).at(30, pid, tid).text("__d0_label", "vdb").set("__d1_label", 7));
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 6u);
  uint64_t group = drawn[0]->pid;
  EXPECT_NE(group, pid);
  auto process = objects(records, 1, group);
  ASSERT_EQ(process.size(), 1u);
  EXPECT_EQ(process[0]->name, "block devices");
  std::map<uint64_t, std::string> names;
  for (const auto *e : drawn) {
    EXPECT_EQ(e->pid, group);
    auto thread = objects(records, 2, e->tid);
    ASSERT_EQ(thread.size(), 1u);
    names[e->tid] = thread[0]->name;
  }
  EXPECT_EQ(drawn[0]->tid, drawn[2]->tid);  // vda, from either task
  EXPECT_EQ(names[drawn[0]->tid], "vda");
  EXPECT_EQ(names[drawn[4]->tid], "vdb");
  EXPECT_EQ(names[drawn[1]->tid], "dev 7");
  EXPECT_EQ(drawn[1]->tid, drawn[5]->tid);
}

// Perfetto keeps counters per process by name: on a keyed track they are
// named after it, so two rings' counters are two sets of series.
TEST_F(FxtSinkTest, CountersOnKeyedTracksAreNamedAfterTheirTrack) {
  auto layout = Layout().field("depth", 8, FieldKind::Signed).hidden("__d0_track").get();
  DrawDecl d = draw(DrawDecl::Kind::Counter, "queues", {"depth"});
  d.track = "__d0_track";
  d.track_name = "ring";
  uint64_t pid = self_pid(), tid = self_tid();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {d}}});
    draw_now(sink, 0, Rec(layout).at(10, pid, tid).set("__d0_track", 0xa).set("depth", 3));
    draw_now(sink, 0, Rec(layout).at(20, pid, tid).set("__d0_track", 0xb).set("depth", -1));
  }
  auto records = read_clean();
  auto drawn = events(records);
  ASSERT_EQ(drawn.size(), 2u);
  EXPECT_EQ(drawn[0]->event_type, 1);
  EXPECT_EQ(drawn[0]->name, "ring 0xa queues");
  EXPECT_EQ(drawn[1]->name, "ring 0xb queues");
  EXPECT_EQ(objects(records, 2, drawn[0]->tid)[0]->name, "ring 0xa");
  EXPECT_EQ(arg(*drawn[1], "depth")->i, -1);
}

// Perfetto holds each counter argument's value until its next sample: a
// sample carries only what changed since the counter's last one in that
// process, and nothing at all (no event) when nothing did.
TEST_F(FxtSinkTest, CounterSamplesCarryOnlyTheValuesThatChanged) {
  auto layout = Layout()
                    .field("in_flight", 8, FieldKind::Signed)
                    .field("sq", 8, FieldKind::Unsigned)
                    .field("cq", 8, FieldKind::Unsigned)
                    .get();
  DrawDecl d = draw(DrawDecl::Kind::Counter, "queues", {"in_flight", "sq", "cq"});
  uint64_t pid = self_pid(), tid = self_tid();
  auto sample = [&](uint64_t ts, uint64_t in_pid, int64_t in_flight, uint64_t sq, uint64_t cq) {
    return Rec(layout)
        .at(ts, in_pid, in_pid == pid ? tid : kFakeTid)
        .set("in_flight", static_cast<uint64_t>(in_flight))
        .set("sq", sq)
        .set("cq", cq);
  };
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {d}}});
    draw_now(sink, 0, sample(10, pid, 1, 2, 3));
    draw_now(sink, 0, sample(20, pid, 1, 5, 3));
    draw_now(sink, 0, sample(30, pid, 1, 5, 3));
    draw_now(sink, 0, sample(40, pid, -1, 5, 4));
    draw_now(sink, 0, sample(50, kFakePid, 1, 5, 3));
  }
  auto records = read_clean();
  auto counters = events(records, {kCounter});
  ASSERT_EQ(counters.size(), 4u);
  auto names = [](const FxtRecord *r) {
    std::vector<std::string> out;
    for (const auto &a : r->args)
      out.push_back(a.name);
    return out;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(counters[0]), (Names{"in_flight", "sq", "cq"}));
  EXPECT_EQ(names(counters[1]), (Names{"sq"}));
  EXPECT_EQ(arg(*counters[1], "sq")->u, 5u);
  EXPECT_EQ(counters[2]->ts, 40u);
  EXPECT_EQ(names(counters[2]), (Names{"in_flight", "cq"}));
  EXPECT_EQ(arg(*counters[2], "in_flight")->i, -1);
  EXPECT_EQ(counters[3]->pid, kFakePid);  // another process: its own series
  EXPECT_EQ(names(counters[3]), (Names{"in_flight", "sq", "cq"}));
}

// A key (a ring shared after fork, a small number) met in two processes is
// a track under each: each needs a thread object naming it in its process.
TEST_F(FxtSinkTest, TrackKeyMetInTwoProcessesIsNamedInEach) {
  auto layout = Layout().hidden("__d0_track").get();
  DrawDecl d = draw(DrawDecl::Kind::Instant, "on-ring");
  d.track = "__d0_track";
  d.track_name = "ring";
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {d}}});
    draw_now(sink, 0, Rec(layout).at(10, self_pid(), self_tid()).set("__d0_track", 3));
    draw_now(sink, 0, Rec(layout).at(20, kFakePid, kFakeTid).set("__d0_track", 3));
  }
  auto records = read_clean();
  std::vector<uint64_t> processes;
  for (const auto &r : records)
    if (r.type == 7 && r.object_type == 2 && r.name == "ring 0x3") {
      EXPECT_NE(r.koid & kTrackBit, 0u);
      processes.push_back(process_of(r));
    }
  std::sort(processes.begin(), processes.end());
  EXPECT_EQ(processes, (std::vector<uint64_t>{std::min(self_pid(), kFakePid),
                                              std::max(self_pid(), kFakePid)}));
}

TEST_F(FxtSinkTest, ThreadsAreNamedFromProcWhenRecorded) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  uint64_t pid = self_pid();
  uint64_t worker = 0;
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}});
    // A thread that is gone by the time its record is drawn.
    std::thread t([&] {
      prctl(PR_SET_NAME, "sink-worker", 0, 0, 0);
      worker = self_tid();
      feed(sink, 0, Rec(layout).at(20, pid, worker));
    });
    t.join();
    feed(sink, 0, Rec(layout).at(10, pid, self_tid()));
    feed(sink, 0, Rec(layout).at(30, kFakePid, kFakeTid));
    feed(sink, 0, Rec(layout).at(40, kFakePid, kFakeTid));
    release(sink, ~0ull);
  }
  auto records = read_clean();
  auto w = objects(records, 2, worker);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0]->name, "sink-worker");
  EXPECT_EQ(process_of(*w[0]), pid);
  auto self = objects(records, 2, self_tid());
  ASSERT_EQ(self.size(), 1u);
  EXPECT_EQ(self[0]->name, comm_of(pid, self_tid()));
  auto fake = objects(records, 2, kFakeTid);
  ASSERT_EQ(fake.size(), 1u);  // once, though drawn twice
  EXPECT_EQ(fake[0]->name, "tid " + std::to_string(kFakeTid));
  EXPECT_EQ(process_of(*fake[0]), kFakePid);
  EXPECT_EQ(objects(records, 1, kFakePid).size(), 1u);
  EXPECT_EQ(objects(records, 1, pid).size(), 1u);
}

// A record's thread is named when it arrives (arrived()), though it is
// drawn later, once the thread is gone.
TEST_F(FxtSinkTest, ThreadsAreNamedFromProcWhenTheirRecordsArrive) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  uint64_t pid = self_pid();
  uint64_t worker = 0;
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}});
    Rec rec(layout);
    std::thread t([&] {
      prctl(PR_SET_NAME, "sink-arrival", 0, 0, 0);
      worker = self_tid();
      rec.at(20, pid, worker);
      sink.arrived(0, rec.data(), rec.size());
    });
    t.join();
    draw_now(sink, 0, rec);
  }
  auto records = read_clean();
  auto w = objects(records, 2, worker);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0]->name, "sink-arrival");
  EXPECT_EQ(process_of(*w[0]), pid);
}

TEST_F(FxtSinkTest, RenamesAfterAThreadWasDrawnReEmitItsThreadObject) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}});
    auto named = [&](uint64_t pid, uint64_t tid, const std::string &comm) {
      std::string rec = thread_name_record(1, pid, tid, comm);
      sink.thread_named(rec.data(), rec.size());
    };
    // Named before it is ever drawn: drawn with that name only.
    named(kFakePid, kFakeTid2, "early");
    feed(sink, 0, Rec(layout).at(5, kFakePid, kFakeTid2));
    // Recorded under its /proc name, renamed before the draw: drawn renamed.
    feed(sink, 0, Rec(layout).at(10, kFakePid, kFakeTid));
    release(sink, ~0ull);
    named(kFakePid, kFakeTid, "worker-1");  // after the draw: a new thread object
    named(kFakePid, kFakeTid, "worker-1");  // unchanged: nothing
    feed(sink, 0, Rec(layout).at(20, kFakePid, kFakeTid));
    release(sink, ~0ull);
    // A 16-byte comm has no terminating zero.
    named(kFakePid, kFakeTid, "abcdefghijklmnopq");
    std::string short_rec = thread_name_record(1, kFakePid, kFakeTid, "ignored").substr(0, 27);
    sink.thread_named(short_rec.data(), short_rec.size());  // too short: ignored
    feed(sink, 0, Rec(layout).at(30, kFakePid, kFakeTid));
    release(sink, ~0ull);
  }
  auto records = read_clean();
  std::vector<std::string> names;
  for (const auto *t : objects(records, 2, kFakeTid)) {
    names.push_back(t->name);
    EXPECT_EQ(process_of(*t), kFakePid);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"tid " + std::to_string(kFakeTid), "worker-1",
                                             "abcdefghijklmnop"}));
  auto early = objects(records, 2, kFakeTid2);
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0]->name, "early");
}

TEST_F(FxtSinkTest, RenameBeforeTheDrawNamesTheThreadOnce) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}});
    feed(sink, 0, Rec(layout).at(10, kFakePid, kFakeTid));  // /proc: "tid N"
    std::string rec = thread_name_record(1, kFakePid, kFakeTid, "renamed");
    sink.thread_named(rec.data(), rec.size());
    release(sink, ~0ull);
  }
  auto records = read_clean();
  auto t = objects(records, 2, kFakeTid);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]->name, "renamed");
}

// The sink remembers the threads it named lately, for runs of their
// records: a rename in between must still reach the trace.
TEST_F(FxtSinkTest, RunsOfOneThreadAreNamedOnceUnlessRenamed) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  {
    FxtSink sink(path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}});
    auto named = [&](uint64_t tid, const std::string &comm) {
      std::string rec = thread_name_record(1, kFakePid, tid, comm);
      sink.thread_named(rec.data(), rec.size());
    };
    uint64_t ts = 0;
    auto run = [&](uint64_t tid, int n) {
      for (int i = 0; i < n; i++) {
        ts++;
        feed(sink, 0, Rec(layout).at(ts, kFakePid, tid).set("n", ts));
      }
    };
    run(kFakeTid, 3);
    run(kFakeTid2, 2);
    run(kFakeTid, 1);
    release(sink, ~0ull);
    named(kFakeTid, "a-1");  // the thread drawn last: a new thread object
    run(kFakeTid, 2);
    release(sink, ~0ull);
    named(kFakeTid, "a-2");  // again, with no other thread in between
    run(kFakeTid, 2);
    named(kFakeTid2, "b-1");  // not the last one drawn
    run(kFakeTid, 1);
    release(sink, ~0ull);
    named(kFakeTid2, "b-1");  // unchanged: nothing
    run(kFakeTid2, 1);
    named(kFakeTid, "a-3");  // renamed between its record and its draw
    run(kFakeTid, 1);
    release(sink, ~0ull);
    EXPECT_EQ(sink.events(), 13u);
  }
  auto records = read_clean();
  auto names_of = [&](uint64_t tid) {
    std::vector<std::string> names;
    for (const auto *t : objects(records, 2, tid)) {
      names.push_back(t->name);
      EXPECT_EQ(process_of(*t), kFakePid);
    }
    return names;
  };
  EXPECT_EQ(names_of(kFakeTid),
            (std::vector<std::string>{"tid " + std::to_string(kFakeTid), "a-1", "a-2", "a-3"}));
  EXPECT_EQ(names_of(kFakeTid2),
            (std::vector<std::string>{"tid " + std::to_string(kFakeTid2), "b-1"}));
  EXPECT_EQ(objects(records, 1, kFakePid).size(), 1u);
  // Each thread object comes before the events it names.
  std::vector<std::pair<uint64_t, std::string>> drawn;  // (ts, name in force)
  std::map<uint64_t, std::string> current;
  for (const auto &r : records) {
    if (r.type == 7 && r.object_type == 2)
      current[r.koid] = r.name;
    if (r.type == 4)
      drawn.emplace_back(r.ts, current[r.tid]);
  }
  ASSERT_EQ(drawn.size(), 13u);
  EXPECT_EQ(drawn[6].second, "a-1");   // ts 7, after the first rename
  EXPECT_EQ(drawn[8].second, "a-2");   // ts 9
  EXPECT_EQ(drawn[11].second, "b-1");  // ts 12
  EXPECT_EQ(drawn[12].second, "a-3");  // ts 13
}

TEST_F(FxtSinkTest, LostRecordsAreACounterOfMoontracesOwnProcess) {
  uint64_t self = self_pid();
  {
    FxtSink sink(path_);
    plan(sink, {});
    sink.lost(500, 7);
    sink.lost(900, 5000000000ull);
    EXPECT_EQ(sink.events(), 0u);  // lost() counts no drawn event
  }
  auto records = read_clean();
  auto counters = events(records, {kCounter});
  ASSERT_EQ(counters.size(), 2u);
  for (const auto *c : counters) {
    EXPECT_EQ(c->name, "lost records");
    EXPECT_EQ(c->category, "moontrace");
    EXPECT_EQ(c->pid, self);
    EXPECT_EQ(c->tid, self);
    ASSERT_EQ(c->args.size(), 1u);
    EXPECT_EQ(c->args[0].name, "lost");
  }
  EXPECT_EQ(counters[0]->ts, 500u);
  EXPECT_EQ(counters[0]->args[0].type, kArgUint32);
  EXPECT_EQ(counters[0]->args[0].u, 7u);
  EXPECT_EQ(counters[1]->ts, 900u);
  EXPECT_EQ(counters[1]->args[0].type, kArgUint64);
  EXPECT_EQ(counters[1]->args[0].u, 5000000000ull);
  auto process = objects(records, 1, self);
  ASSERT_EQ(process.size(), 1u);  // named once
  EXPECT_EQ(process[0]->name, "moontrace");
  auto thread = objects(records, 2, self);
  ASSERT_EQ(thread.size(), 1u);
  EXPECT_EQ(process_of(*thread[0]), self);
}

TEST_F(FxtSinkTest, EventsAreFlushedWhenTheSinkIsDestroyed) {
  auto layout = Layout().field("n", 4, FieldKind::Unsigned).get();
  uint64_t bytes = 0;
  {
    FxtSink sink(path_);
    EXPECT_EQ(sink.path(), path_);
    plan(sink, {{layout, {draw(DrawDecl::Kind::Instant, "tick", {"n"})}}});
    draw_now(sink, 0, Rec(layout).at(10, self_pid(), self_tid()).set("n", 1));
    bytes = sink.bytes();
  }
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<uint64_t>(in.tellg()), bytes);
  EXPECT_EQ(events(read_clean()).size(), 1u);
}

// The sink's table of open flows against a std::map, through growth and
// deletions that shift runs of colliding keys.
TEST(OpenFlowsTest, AgreesWithAMapThroughOpensAndCloses) {
  OpenFlows flows;
  std::map<uint64_t, uint64_t> expected;
  std::mt19937_64 random(13);
  uint64_t next_id = 1;
  size_t wrong = 0;
  for (int i = 0; i < 200000; i++) {
    // Keys as aligned pointers (low bits 0), many repeats.
    uint64_t key = 0xffff888100000000ull + (random() % 15000) * 64;
    switch (random() % 3) {
      case 0:
        flows.open(key, next_id);
        expected[key] = next_id++;
        break;
      case 1: {
        auto it = expected.find(key);
        wrong += flows.close(key) != (it == expected.end() ? 0 : it->second);
        if (it != expected.end())
          expected.erase(it);
        break;
      }
      default: {
        auto it = expected.find(key);
        wrong += flows.find(key) != (it == expected.end() ? 0 : it->second);
      }
    }
    wrong += flows.size() != expected.size();
  }
  EXPECT_EQ(wrong, 0u);
  for (const auto &[k, id] : expected)
    wrong += flows.find(k) != id;
  EXPECT_EQ(wrong, 0u);
  flows.clear();
  EXPECT_EQ(flows.size(), 0u);
  EXPECT_EQ(flows.find(expected.begin()->first), 0u);
}

}  // namespace
}  // namespace mt
