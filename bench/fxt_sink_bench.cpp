// The consumer's per-record cost after the ring buffers: decoding records
// by their layout, merging them into time order, writing FXT. Records shaped
// like uring.lua's (a submit slice that begins a flow, a hop that steps it,
// a completion that ends it, and per batch an io_uring_enter slice with a
// counter and an instant on the ring's keyed track) from two "CPUs" are
// built in memory first, then fed to the reorder window slightly out of
// time order, as from per-CPU ring buffers, and drawn by FxtSink into
// /dev/null (or a file). Reports ns per record and records per second
// (best and median of the rounds). One thread: it loads one CPU. Not run
// by ctest.
//
//   build/bench/fxt_sink_bench [requests per round, default 200000] [rounds, default 7]
//                              [trace file, default /dev/null]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "codegen/c_generator.h"
#include "common/declaration.h"
#include "run/record_decoder.h"
#include "run/reorder_window.h"
#include "tests/record_layout.h"
#include "trace/fxt_sink.h"

namespace {

using namespace mt;
using mt::testing::Layout;

// Beyond any pid_max: /proc has no name for them, so naming costs no I/O.
constexpr uint64_t kPid = 0x7fffff00;

const RecordField &field_of(const RecordLayout &layout, const std::string &name) {
  if (const RecordField *f = testing::field_named(layout, name))
    return *f;
  std::fprintf(stderr, "no field %s\n", name.c_str());
  std::abort();
}

struct Record {
  uint32_t probe;
  std::vector<unsigned char> bytes;
};

class Builder {
 public:
  Builder(uint32_t probe, const RecordLayout &layout)
      : layout_(layout), rec_{probe, std::vector<unsigned char>(layout.size)} {
    std::memcpy(rec_.bytes.data(), &probe, 4);  // __probe, as the kernel writes it
  }
  Builder &at(uint64_t ts, uint64_t tid) { return set("__ts", ts).set("__task", kPid << 32 | tid); }
  Builder &set(const std::string &name, uint64_t v) {
    const RecordField &f = field_of(layout_, name);
    std::memcpy(&rec_.bytes[f.offset], &v, std::min<uint32_t>(f.size, 8));
    return *this;
  }
  Builder &text(const std::string &name, const std::string &s) {
    const RecordField &f = field_of(layout_, name);
    std::memcpy(&rec_.bytes[f.offset], s.data(), std::min<size_t>(s.size(), f.size));
    return *this;
  }
  Record done() { return std::move(rec_); }

 private:
  const RecordLayout &layout_;
  Record rec_;
};

DrawDecl draw(DrawDecl::Kind kind, const std::string &name, std::vector<std::string> args) {
  DrawDecl d;
  d.kind = kind;
  d.name = name;
  d.category = "io_uring";
  d.args = std::move(args);
  return d;
}

DrawDecl flow(DrawDecl d, DrawDecl::Flow point) {
  d.flow = "__d0_flow";
  d.flow_point = point;
  return d;
}

struct Setup {
  Declaration decl;
  GeneratedProgram generated;
  std::vector<std::optional<RecordLayout>> layouts;
  void add(const RecordLayout &layout, std::vector<DrawDecl> draws) {
    int id = static_cast<int>(decl.probes.size());
    ProbeDecl p;
    p.id = id;
    p.alternatives = {"tracepoint:bench:p" + std::to_string(id)};
    p.draws = std::move(draws);
    decl.probes.push_back(std::move(p));
    GeneratedProbe g;
    g.decl_id = id;
    g.program = "mt_probe_" + std::to_string(id);
    g.record = "mt_rec_" + std::to_string(id);
    generated.probes.push_back(g);
    layouts.push_back(layout);
  }
};

enum Probe : uint32_t { kSubmit, kHop, kComplete, kEnter, kReaped };

}  // namespace

int main(int argc, char **argv) {
  size_t requests = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  std::string out = argc > 3 ? argv[3] : "/dev/null";

  auto submit = Layout()
                    .field("user_data", 8, FieldKind::Unsigned)
                    .field("opcode", 1, FieldKind::Unsigned)
                    .field("op", 16, FieldKind::String)
                    .field("flags", 4, FieldKind::Unsigned)
                    .field("sq_thread", 1, FieldKind::Bool)
                    .field("ring", 8, FieldKind::Pointer)
                    .field("req", 8, FieldKind::Pointer)
                    .hidden("__d0_flow")
                    .get();
  auto hop = Layout()
                 .field("user_data", 8, FieldKind::Unsigned)
                 .field("opcode", 1, FieldKind::Unsigned)
                 .field("mask", 4, FieldKind::Unsigned)
                 .field("op", 16, FieldKind::String)
                 .field("req", 8, FieldKind::Pointer)
                 .hidden("__d0_flow")
                 .get();
  auto complete = Layout()
                      .field("user_data", 8, FieldKind::Unsigned)
                      .field("res", 4, FieldKind::Signed)
                      .field("cflags", 4, FieldKind::Unsigned)
                      .field("req", 8, FieldKind::Pointer)
                      .hidden("__d0_flow")
                      .get();
  auto enter = Layout()
                   .field("fd", 4, FieldKind::Signed)
                   .field("to_submit", 4, FieldKind::Unsigned)
                   .field("min_complete", 4, FieldKind::Unsigned)
                   .field("flags", 4, FieldKind::Unsigned)
                   .field("ret", 4, FieldKind::Signed)
                   .field("in_flight", 8, FieldKind::Unsigned)
                   .field("sq", 4, FieldKind::Unsigned)
                   .field("cq", 4, FieldKind::Unsigned)
                   .hidden("latency")
                   .hidden("__d1_track")
                   .get();
  auto reaped = Layout()
                    .field("reaped", 4, FieldKind::Unsigned)
                    .field("cq_head", 4, FieldKind::Unsigned)
                    .hidden("__d0_track")
                    .get();

  Setup s;
  s.add(submit, {flow(draw(DrawDecl::Kind::Slice, "submit",
                           {"user_data", "opcode", "op", "flags", "sq_thread", "ring", "req"}),
                      DrawDecl::Flow::Begin)});
  s.add(hop, {flow(draw(DrawDecl::Kind::Slice, "poll_arm", {"user_data", "opcode", "mask", "op"}),
                   DrawDecl::Flow::Step)});
  s.add(complete,
        {flow(draw(DrawDecl::Kind::Slice, "complete", {"user_data", "res", "cflags", "req"}),
              DrawDecl::Flow::End)});
  DrawDecl enter_slice = draw(DrawDecl::Kind::Slice, "io_uring_enter",
                              {"fd", "to_submit", "min_complete", "flags", "ret"});
  enter_slice.duration = "latency";
  DrawDecl queues = draw(DrawDecl::Kind::Counter, "queues", {"in_flight", "sq", "cq"});
  queues.track = "__d1_track";
  queues.track_name = "ring";
  s.add(enter, {enter_slice, queues});
  DrawDecl reaped_draw = draw(DrawDecl::Kind::Instant, "reaped", {"reaped", "cq_head"});
  reaped_draw.track = "__d0_track";
  reaped_draw.track_name = "ring";
  s.add(reaped, {reaped_draw});

  // Two threads (one per "CPU"), each with its own ring, submitting
  // batches of 32; every third request takes a hop. Each thread's records
  // are in time order, as in a per-CPU buffer.
  std::vector<Record> streams[2];
  const char *ops[] = {"READ", "WRITE", "NOP", "POLL_ADD"};
  for (int t = 0; t < 2; t++) {
    uint64_t tid = kPid + 1 + t, ring = 0xffff888100000000ull + t * 0x1000;
    uint64_t ts = 1000 + t * 7;
    auto &out = streams[t];
    for (size_t r = 0; r < requests / 2; r += 32) {
      uint64_t enter_start = ts;
      for (size_t i = r; i < r + 32 && i < requests / 2; i++) {
        uint64_t req = 0xffff888200000000ull + (t << 24) + i * 64, flow_id = req ^ (ring << 16);
        const char *op = ops[i % 4];
        out.push_back(Builder(kSubmit, submit)
                          .at(ts += 50, tid)
                          .set("user_data", i)
                          .set("opcode", i % 4)
                          .text("op", op)
                          .set("flags", 0)
                          .set("ring", ring)
                          .set("req", req)
                          .set("__d0_flow", flow_id)
                          .done());
        if (i % 3 == 0)
          out.push_back(Builder(kHop, hop)
                            .at(ts += 40, tid)
                            .set("user_data", i)
                            .set("opcode", i % 4)
                            .set("mask", 1)
                            .text("op", op)
                            .set("req", req)
                            .set("__d0_flow", flow_id)
                            .done());
        out.push_back(Builder(kComplete, complete)
                          .at(ts += 60, tid)
                          .set("user_data", i)
                          .set("res", 4096)
                          .set("cflags", 0)
                          .set("req", req)
                          .set("__d0_flow", flow_id)
                          .done());
      }
      ts += 30;
      out.push_back(Builder(kEnter, enter)
                        .at(ts, tid)
                        .set("fd", 3)
                        .set("to_submit", 32)
                        .set("min_complete", 32)
                        .set("ret", 32)
                        .set("in_flight", 32)
                        .set("sq", 0)
                        .set("cq", 32)
                        .set("latency", ts - enter_start)
                        .set("__d1_track", ring)
                        .done());
      out.push_back(Builder(kReaped, reaped)
                        .at(ts += 20, tid)
                        .set("reaped", 32)
                        .set("cq_head", static_cast<uint64_t>(r))
                        .set("__d0_track", ring)
                        .done());
    }
  }
  // Chunks of 64 records from each stream in turn; release every chunk
  // pair, up to the older of the two streams' last times (a watermark).
  std::vector<const Record *> order;
  std::vector<size_t> source;           // the stream of order[i]
  std::vector<uint64_t> release_after;  // watermark to release after order[i], 0 none
  {
    size_t at[2] = {0, 0};
    constexpr size_t kChunk = 64;
    auto ts_of = [&](const Record &r) {
      uint64_t v;
      std::memcpy(&v, r.bytes.data() + 8, 8);  // __ts follows __probe (4 bytes, padded)
      return v;
    };
    while (at[0] < streams[0].size() || at[1] < streams[1].size()) {
      uint64_t last[2] = {0, 0};
      for (int t = 0; t < 2; t++) {
        for (size_t k = 0; k < kChunk && at[t] < streams[t].size(); k++, at[t]++) {
          order.push_back(&streams[t][at[t]]);
          source.push_back(t);
          release_after.push_back(0);
          last[t] = ts_of(streams[t][at[t]]);
        }
      }
      release_after.back() = std::min(last[0] ? last[0] : ~0ull, last[1] ? last[1] : ~0ull);
    }
    release_after.back() = ~0ull;
  }

  std::vector<double> ns;
  uint64_t events = 0, bytes = 0;
  for (int round = 0; round < rounds; round++) {
    FxtSink sink(out);
    sink.plan(s.decl, s.generated, s.layouts);
    ReorderWindow window(2);
    auto draw = [&sink](const unsigned char *data, uint32_t size) {
      uint32_t probe;
      std::memcpy(&probe, data, 4);
      sink.draw(probe, data, size);
    };
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < order.size(); i++) {
      const Record &r = *order[i];
      uint64_t ts = sink.arrived(r.probe, r.bytes.data(), r.bytes.size());
      window.hold(source[i], ts, r.bytes.data(), r.bytes.size(), 0);
      if (release_after[i])
        window.release(release_after[i], draw);
    }
    sink.flush();
    auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                 static_cast<double>(order.size()));
    events = sink.events();
    bytes = sink.bytes();
  }
  std::vector<double> sorted = ns;
  std::sort(sorted.begin(), sorted.end());
  std::printf("fxt_sink_bench: %zu records, %llu drawn events, %.1f MB of FXT per round\n",
              order.size(), static_cast<unsigned long long>(events), bytes / 1e6);
  std::printf("ns per record:");
  for (double v : ns)
    std::printf(" %.1f", v);
  std::printf("\nbest %.1f  median %.1f ns/record (%.2f / %.2f M records/s)\n", sorted.front(),
              sorted[sorted.size() / 2], 1e3 / sorted.front(), 1e3 / sorted[sorted.size() / 2]);
  return 0;
}
