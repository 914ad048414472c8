// Every shipped script on this machine's kernel, with whatever fallbacks
// it needs here (no kprobes, fentry refused), checked against workloads
// whose counts the test sets: file_ops on a private ext4 filesystem and
// direct I/O on private loop devices. What a kernel cannot trace must be
// named on stderr; everything traced must equal what the workload did.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/e2e/e2e_support.h"
#include "tests/e2e/loop_device.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

class E2eIoScripts : public BpfTest {};

// What file_ops does (see tests/workloads/file_ops.c).
struct FileOps {
  int opens = 3, reads = 5, writes = 4, fsyncs = 2, creates = 2, bytes = 8192, direct_reads = 6;
};

char process_state(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

// Traces one file_ops run with moontrace `args`, on a fresh ext4 with
// direct reads from a fresh loop device: "{pid}" stands for the
// workload's pid, "{disk}" for that device's name. The workload stops
// itself once loaded, moontrace attaches, the workload runs to its end,
// and moontrace is stopped with SIGINT.
Result trace_file_ops(std::vector<std::string> args, const FileOps &ops = {}) {
  Ext4Mount fs;
  LoopDevice dev;
  Process work({{workload("file_ops"), "-s", "-o", std::to_string(ops.opens), "-r",
                 std::to_string(ops.reads), "-w", std::to_string(ops.writes), "-f",
                 std::to_string(ops.fsyncs), "-c", std::to_string(ops.creates), "-b",
                 std::to_string(ops.bytes), "-D", dev.path(), "-n",
                 std::to_string(ops.direct_reads), fs.dir()}});
  for (int i = 0; i < 500 && process_state(work.pid()) != 'T'; i++)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(process_state(work.pid()), 'T') << "file_ops did not stop itself";
  for (auto &a : args)
    a = a == "{pid}" ? std::to_string(work.pid()) : a == "{disk}" ? dev.name() : a;
  Process tracer(mt(args));
  bool ready = tracer.wait_for_err(kReady);
  work.resume();
  auto w = work.wait();
  EXPECT_EQ(w.exit_code, 0) << w;
  EXPECT_TRUE(ready) << tracer.err();
  tracer.signal(SIGINT);
  return tracer.wait();
}

// Starts a tracer, writes `count` 4 KiB blocks to `loop` with O_DIRECT
// (one request each), waits until the disk says they completed, and
// stops the tracer. `writer_pid` gets the writer's pid.
Result trace_direct_writes(const std::vector<std::string> &args, const LoopDevice &loop,
                           uint64_t count, pid_t *writer_pid = nullptr) {
  Process tracer(mt(args));
  EXPECT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
  uint64_t before = loop.writes_completed();
  Process writer(direct_writes(loop.path(), count, 4096, true));
  if (writer_pid)
    *writer_pid = writer.pid();
  writer.resume();
  auto w = writer.wait();
  EXPECT_EQ(w.exit_code, 0) << w;
  for (int i = 0; i < 100 && loop.writes_completed() < before + count; i++)
    std::this_thread::sleep_for(20ms);
  tracer.signal(SIGINT);
  return tracer.wait();
}

// The rows of the table under the line starting with `header`, by the
// words of `key_columns` joined with a space (e.g. "syscall sys_read").
std::map<std::string, std::vector<std::string>> table_after(const std::string &out,
                                                            const std::string &header,
                                                            size_t key_columns = 1) {
  std::map<std::string, std::vector<std::string>> rows;
  bool in_table = false;
  for (const auto &line : lines(out)) {
    if (line.rfind(header, 0) == 0) {
      in_table = true;
      continue;
    }
    auto w = words(line);
    if (!in_table || w.size() <= key_columns)
      continue;
    std::string key;
    for (size_t i = 0; i < key_columns; i++)
      key += (i ? " " : "") + w[i];
    rows[key] = std::vector<std::string>(w.begin() + key_columns, w.end());
  }
  return rows;
}

// The events in each histogram printed as "@NAME:" (or, keyed, under a
// "KEY = 'VALUE'" line: then by "NAME KEY = 'VALUE'").
std::map<std::string, uint64_t> histogram_totals(const std::string &out) {
  std::map<std::string, uint64_t> totals;
  std::string name, section;
  std::regex bucket(R"(^\s+-?\d+ -> \d+\s+: (\d+)\s+\|)");
  for (const auto &line : lines(out)) {
    std::smatch m;
    if (line.size() > 2 && line[0] == '@' && line.back() == ':') {
      name = line.substr(1, line.size() - 2);
      section = name;
    } else if (line.find(" = '") != std::string::npos && line[0] != ' ') {
      section = name + " " + line;
    } else if (std::regex_search(line, m, bucket)) {
      totals[section] += std::stoull(m[1]);
    }
  }
  return totals;
}

uint64_t number(const std::string &text) {
  return std::stoull(text);
}

TEST_F(E2eIoScripts, ListShowsEveryShippedScriptWithALine) {
  auto r = run(mt({"list"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  std::vector<std::string> names;
  for (const auto &line : lines(r.out)) {
    auto w = words(line);
    ASSERT_GE(w.size(), 3u) << line;  // a name and a description
    names.push_back(w[0]);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"biolatency", "biosnoop", "demo", "ext4slower", "iostack",
                                      "uring", "uring_block", "uring_fs", "vfsstat"}))
      << r;
  EXPECT_TRUE(contains(r.out, "iostack      1.0.0    where IO time goes, layer by layer")) << r;
}

// Under -c, block requests kernel threads issue are filtered out: a script
// that shows block requests says so, unless it draws them on flows (kept
// in any task).
TEST_F(E2eIoScripts, UnderACommandBlockScriptsSayWhatTheFilterLeavesOut) {
  const std::string note = "moontrace: under -c and -p, block requests issued by kernel threads";
  for (std::string name : {"biosnoop", "biolatency", "uring_block"}) {
    TempDir dir;
    auto r = run({mt({"-c", "true", name}).argv, {}, false, dir.path().string()}, 120s);
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(contains(r.err, note), name != "uring_block") << name << "\n" << r;
  }
}

TEST_F(E2eIoScripts, DemoPrintsEveryCompletion) {
  auto r = run(mt({"-c", workload("nop_storm") + " 8", "demo"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 8)) << r;
  EXPECT_EQ(values_of(r.out, "res"), std::vector<uint64_t>(8, 0)) << r;
  EXPECT_TRUE(contains(r.out, "\n8 completions (result >= -4096)\n")) << r;
}

// Every layer this kernel can trace is timed, once per operation the
// workload did; what it cannot trace is named on stderr.
TEST_F(E2eIoScripts, IostackTimesEachOperationOfEachLayer) {
  FileOps ops;
  auto r = trace_file_ops({"iostack", "-p", "{pid}", "-d", "{disk}"}, ops);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "Tracing the IO stack (syscall vfs ext4 blk)... Hit Ctrl-C to end."))
      << r;
  uint64_t reads = ops.reads + ops.direct_reads, opens = ops.opens + 1;  // and DEV's
  const std::map<std::string, uint64_t> expected = {
      {"syscall sys_read", reads},
      {"syscall sys_write", ops.writes},
      {"syscall sys_open", opens},
      {"syscall sys_fsync", ops.fsyncs},
      {"vfs vfs_read", reads},
      {"vfs vfs_write", ops.writes},
      {"vfs vfs_open", opens},
      {"vfs vfs_fsync_range", ops.fsyncs},
      {"ext4 ext4_file_read_iter", ops.reads},
      {"ext4 ext4_file_write_iter", ops.writes},
      {"ext4 ext4_file_open", ops.opens},
      {"ext4 ext4_sync_file", ops.fsyncs},
      {"blk blk_request", ops.direct_reads},
  };
  auto table = table_after(r.out, "LAYER    OPERATION", 2);
  auto histograms = histogram_totals(r.out);
  for (const auto &[op, count] : expected) {
    std::string fn = op.substr(op.find(' ') + 1), layer = op.substr(0, op.find(' '));
    if (!table.count(op)) {
      // Untraced: named, alone or as its whole layer.
      EXPECT_TRUE(contains(r.err, "iostack.lua: " + layer + ": ") &&
                  (contains(r.err, fn) || contains(r.err, layer + ": the layer cannot be traced")))
          << op << "\n"
          << r;
      continue;
    }
    EXPECT_EQ(number(table[op][0]), count) << op << "\n" << r;
    EXPECT_EQ(histograms[fn], count) << op << "\n" << r;
    EXPECT_GT(number(table[op][1]), 0u) << op << ": summed time\n" << r;
  }
  // Tracepoints stand in where kprobes and fentry are missing; for ext4's
  // write, each buffered write's copy into one folio or more.
  for (const char *op :
       {"syscall sys_read", "syscall sys_fsync", "ext4 ext4_sync_file", "blk blk_request"})
    EXPECT_TRUE(table.count(op)) << op << "\n" << r;
  if (!table.count("ext4 ext4_file_write_iter")) {
    ASSERT_TRUE(table.count("ext4 ext4_write_begin")) << r;
    EXPECT_GE(number(table["ext4 ext4_write_begin"][0]), uint64_t(ops.writes)) << r;
  }
  EXPECT_TRUE(contains(r.err, ", 0 lost")) << r;
}

TEST_F(E2eIoScripts, IostackBlockLayerAloneWithQueueingInMilliseconds) {
  LoopDevice loop;
  auto r = trace_direct_writes({"iostack", "-T", "blk", "-Q", "-m", "-d", loop.name()}, loop, 30);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "Tracing the IO stack (blk)...")) << r;
  auto table = table_after(r.out, "LAYER    OPERATION", 2);
  EXPECT_EQ(table.size(), 1u) << r;
  ASSERT_TRUE(table.count("blk blk_request")) << r;
  EXPECT_EQ(number(table["blk blk_request"][0]), 30u) << r;
  EXPECT_TRUE(contains(r.out, "     msecs               : count    distribution")) << r;
  EXPECT_TRUE(contains(r.out, "TOTAL(ms)")) << r;
  EXPECT_EQ(histogram_totals(r.out)["blk_request"], 30u) << r;
}

// With -o FILE.fxt: each pwrite64 a slice on the writer's thread, holding
// the issue of its block request, with an arrow to the request on the
// disk's track.
TEST_F(E2eIoScripts, IostackDrawsEachLayersOperationsAndBlockRequestsOnTheirDisk) {
  LoopDevice loop;
  TempDir dir;
  std::string file = dir.file("iostack.fxt"), command;
  for (const auto &a : direct_writes(loop.path(), 64, 4096).argv)
    command += (command.empty() ? "" : " ") + a;
  auto r = run(mt({"-o", file, "-c", command, "iostack", "-d", loop.name()}), 60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, ", 0 lost")) << r;
  EXPECT_TRUE(contains(r.out, "LAYER    OPERATION")) << r;  // the table goes to stdout
  Trace t = valid_trace(file);
  auto writes = t.named("sys_pwrite64"), issues = t.named("blk_issue"),
       requests = t.named("blk_request");
  ASSERT_EQ(writes.size(), 64u);
  ASSERT_EQ(issues.size(), 64u);
  EXPECT_EQ(requests.size(), 64u);  // on the disk's track, or in its lanes
  size_t nested = 0;
  for (const auto *i : issues)
    for (const auto *w : writes)
      nested += w->tid == i->tid && w->ts <= i->ts && i->ts < w->extra;
  EXPECT_EQ(nested, 64u);
  auto names = t.thread_names_by_tid();
  for (const auto *q : requests)
    EXPECT_EQ(names[q->tid], loop.name());
  EXPECT_EQ(t.flow_points(8, "blk"), 64u);
  EXPECT_EQ(t.flow_points(10, "blk"), 64u);
}

// The same writes to a file on a private ext4: here, where ext4's write
// cannot be timed (no kprobes, no fentry), iomap's tracepoints show the
// filesystem's part, so each block request's issue is inside the direct
// write in ext4, inside the pwrite64.
TEST_F(E2eIoScripts, IostackDrawsTheFilesystemLayerBetweenSyscallAndBlock) {
  Ext4Mount fs;
  TempDir dir;
  std::string data = fs.dir() + "/data", file = dir.file("iostack.fxt"), command;
  std::ofstream{data};
  ASSERT_EQ(truncate(data.c_str(), 1 << 20), 0);
  chmod(fs.dir().c_str(), 0777);
  chmod(data.c_str(), 0666);  // -c's command may run as SUDO_UID
  for (const auto &a : direct_writes(data, 64, 4096).argv)
    command += (command.empty() ? "" : " ") + a;
  auto r = run(mt({"-o", file, "-c", command, "iostack", "-d", fs.device().name()}), 60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  Trace t = valid_trace(file);
  auto writes = t.named("sys_pwrite64"), in_fs = t.named("ext4_file_write_iter"),
       issues = t.named("blk_issue");
  if (in_fs.empty())
    in_fs = t.named("iomap_dio");
  ASSERT_EQ(writes.size(), 64u) << r;
  ASSERT_EQ(in_fs.size(), 64u) << r;
  ASSERT_EQ(issues.size(), 64u) << r;
  auto nested = [](const auto &outer, const auto &inner) {
    size_t n = 0;
    for (const auto *i : inner)
      for (const auto *o : outer)
        n += o->tid == i->tid && o->ts <= i->ts && i->extra <= o->extra;
    return n;
  };
  EXPECT_EQ(nested(writes, in_fs), 64u);
  EXPECT_EQ(nested(in_fs, issues), 64u);
  EXPECT_EQ(t.named("blk_request").size(), 64u);
  EXPECT_EQ(t.flow_points(10, "blk"), 64u);
}

TEST_F(E2eIoScripts, IostackRefusesBadInputAtItsLine) {
  std::regex at_line(R"(moontrace: iostack\.lua:\d+: )");
  auto bad_type = run(mt({"iostack", "-T", "disk"}));
  EXPECT_TRUE(one_line_error(
      bad_type, {"invalid value 'disk' for -T: expected one of syscall, vfs, ext4, blk, all"}));
  EXPECT_TRUE(std::regex_search(bad_type.err, at_line)) << bad_type;
  auto bad_disk = run(mt({"iostack", "-d", "nosuchdisk"}));
  EXPECT_TRUE(one_line_error(bad_disk, {"no such disk 'nosuchdisk'"}));
  EXPECT_TRUE(std::regex_search(bad_disk.err, at_line)) << bad_disk;
  EXPECT_TRUE(one_line_error(run(mt({"iostack", "-p", "x"})), {"invalid value 'x' for -p"}));
  // A layer asked for alone that this kernel cannot trace at all.
  auto vfs = run(mt({"--duration", "1", "iostack", "-T", "vfs"}));
  if (vfs.exit_code == 1)
    EXPECT_TRUE(
        one_line_error(vfs, {"iostack.lua:", "the vfs layer cannot be traced on this kernel"}));
  else
    EXPECT_EQ(vfs.exit_code, 0) << vfs;
}

TEST_F(E2eIoScripts, VfsstatCountsEachOperation) {
  FileOps ops;
  auto r = trace_file_ops({"-p", "{pid}", "vfsstat"}, ops);
  ASSERT_EQ(r.exit_code, 0) << r;
  auto out = lines(r.out);
  ASSERT_FALSE(out.empty()) << r;
  EXPECT_EQ(words(out[0]), (std::vector<std::string>{"TIME", "READ/s", "WRITE/s", "FSYNC/s",
                                                     "OPEN/s", "CREATE/s"}))
      << r;
  auto totals = table_after(r.out, "TIME")["TOTAL:"];
  std::vector<uint64_t> got;
  for (const auto &w : totals)
    got.push_back(number(w));
  EXPECT_EQ(got, (std::vector<uint64_t>{uint64_t(ops.reads + ops.direct_reads),
                                        uint64_t(ops.writes), uint64_t(ops.fsyncs),
                                        uint64_t(ops.opens + 1), uint64_t(ops.creates)}))
      << r;
  // Per-second lines sum to no more than the totals.
  std::vector<uint64_t> summed(5);
  for (const auto &line : out)
    if (std::regex_search(line, std::regex(R"(^\d\d:\d\d:\d\d: )")))
      for (size_t i = 0; i < 5; i++)
        summed[i] += number(words(line)[i + 1]);
  for (size_t i = 0; i < 5; i++)
    EXPECT_LE(summed[i], got[i]) << r;
  // Without kprobes or fentry the system calls stand in, and it says so.
  if (!contains(r.err, "counting the system calls that reach them")) {
    EXPECT_FALSE(contains(r.err, "cannot be traced")) << r;
  }
}

TEST_F(E2eIoScripts, VfsstatStopsAfterCountLines) {
  auto r = run(mt({"vfsstat", "1", "2"}), 20s);
  ASSERT_EQ(r.exit_code, 0) << r;
  size_t per_second = 0;
  for (const auto &line : lines(r.out))
    per_second +=
        std::regex_search(line, std::regex(R"(^\d\d:\d\d:\d\d:\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+$)"));
  EXPECT_EQ(per_second, 2u) << r;
  EXPECT_TRUE(contains(r.out, "\nTOTAL:")) << r;
  EXPECT_TRUE(one_line_error(run(mt({"vfsstat", "0"})),
                             {"vfsstat.lua:", "interval must be at least 1 second"}));
  EXPECT_TRUE(one_line_error(run(mt({"vfsstat", "1", "2", "3"})), {"unexpected argument '3'"}));
}

// At 0 ms every operation is shown: one line per call the workload made,
// with its size, offset and file.
TEST_F(E2eIoScripts, Ext4slowerShowsEveryOperationAtZero) {
  FileOps ops;
  auto r = trace_file_ops({"ext4slower", "-p", "{pid}", "0"}, ops);
  ASSERT_EQ(r.exit_code, 0) << r;
  auto out = lines(r.out);
  ASSERT_GE(out.size(), 2u) << r;
  EXPECT_EQ(out[0], "Tracing ext4 operations") << r;
  EXPECT_EQ(words(out[1]), (std::vector<std::string>{"TIME", "COMM", "PID", "T", "BYTES", "OFF_KB",
                                                     "LAT(ms)", "FILENAME"}))
      << r;
  std::map<std::string, std::vector<std::vector<std::string>>> by_type;
  for (size_t i = 2; i < out.size(); i++) {
    auto w = words(out[i]);
    ASSERT_EQ(w.size(), 8u) << out[i];
    EXPECT_EQ(w[1], "file_ops") << out[i];
    EXPECT_EQ(w[7], "data") << out[i];
    by_type[w[3]].push_back(w);
  }
  std::map<std::string, std::pair<const char *, int>> expected = {
      {"R", {"ext4_file_read_iter", ops.reads}},
      {"W", {"ext4_file_write_iter", ops.writes}},
      {"O", {"ext4_file_open", ops.opens}},
      {"S", {"ext4_sync_file", ops.fsyncs}},
  };
  for (const auto &[type, what] : expected) {
    auto &[fn, count] = what;
    if (!by_type.count(type)) {
      EXPECT_TRUE(contains(r.err, fn)) << fn << " neither traced nor named\n" << r;
      continue;
    }
    ASSERT_EQ(by_type[type].size(), size_t(count)) << type << "\n" << r;
    for (int i = 0; i < count; i++) {
      const auto &w = by_type[type][i];
      bool sized = type == "R" || type == "W";
      EXPECT_EQ(number(w[4]), sized ? uint64_t(ops.bytes) : 0u) << type << " " << i;
      uint64_t offset = type == "R" ? i % ops.writes * ops.bytes : type == "W" ? i * ops.bytes : 0;
      EXPECT_EQ(number(w[5]), offset / 1024) << type << " " << i;
    }
  }
  EXPECT_TRUE(by_type.count("S")) << "fsync has tracepoints on every kernel\n" << r;
}

TEST_F(E2eIoScripts, Ext4slowerKeepsOnlySlowOperations) {
  auto r = trace_file_ops({"ext4slower", "-p", "{pid}", "100000"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(lines(r.out).size(), 2u) << r;  // the two header lines
  EXPECT_TRUE(contains(r.out, "Tracing ext4 operations slower than 100000 ms\n")) << r;
}

TEST_F(E2eIoScripts, BiolatencyHistogramPerDiskHoldsEveryRequest) {
  LoopDevice loop;
  auto r = trace_direct_writes({"biolatency", "-D", "-d", loop.name()}, loop, 50);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "Tracing block device I/O... Hit Ctrl-C to end.")) << r;
  EXPECT_TRUE(contains(r.out, "\ndisk = '" + loop.name() + "'\n     usecs               : count"))
      << r;
  auto totals = histogram_totals(r.out);
  EXPECT_EQ(totals["latency disk = '" + loop.name() + "'"], 50u) << r;
  EXPECT_EQ(totals.size(), 1u) << r;
}

TEST_F(E2eIoScripts, BiolatencyQueuedMillisecondsAndIntervals) {
  LoopDevice loop;
  auto r = trace_direct_writes({"biolatency", "-Q", "-m", "-d", loop.name()}, loop, 40);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "     msecs               : count    distribution")) << r;
  EXPECT_EQ(histogram_totals(r.out)["latency"], 40u) << r;

  // INTERVAL COUNT: COUNT histograms, each after a time line with -T, then exit.
  auto timed = run(mt({"biolatency", "-T", "1", "2"}), 20s);
  ASSERT_EQ(timed.exit_code, 0) << timed;
  size_t stamps = 0;
  for (const auto &line : lines(timed.out))
    stamps += std::regex_match(line, std::regex(R"(\d\d:\d\d:\d\d)"));
  EXPECT_EQ(stamps, 2u) << timed;
  EXPECT_TRUE(one_line_error(run(mt({"biolatency", "-d", "nosuchdisk"})),
                             {"biolatency.lua:", "no such disk 'nosuchdisk'"}));
  EXPECT_TRUE(
      one_line_error(run(mt({"biolatency", "soon"})), {"invalid value 'soon' for interval"}));
}

TEST_F(E2eIoScripts, BiosnoopPrintsOneLinePerRequest) {
  LoopDevice loop;
  pid_t writer = 0;
  auto r = trace_direct_writes({"biosnoop", "-d", loop.name()}, loop, 20, &writer);
  ASSERT_EQ(r.exit_code, 0) << r;
  auto out = lines(r.out);
  ASSERT_EQ(out.size(), 21u) << r;
  EXPECT_EQ(words(out[0]), (std::vector<std::string>{"TIME(s)", "COMM", "PID", "DISK", "T",
                                                     "SECTOR", "BYTES", "LAT(ms)"}))
      << r;
  std::vector<uint64_t> sectors;
  for (size_t i = 1; i < out.size(); i++) {
    auto w = words(out[i]);
    ASSERT_EQ(w.size(), 8u) << out[i];
    EXPECT_EQ(w[1], "direct_writes") << out[i];
    EXPECT_EQ(w[2], std::to_string(writer)) << out[i];
    EXPECT_EQ(w[3], loop.name()) << out[i];
    EXPECT_EQ(w[4], "W") << out[i];
    EXPECT_EQ(w[6], "4096") << out[i];
    sectors.push_back(number(w[5]));
  }
  std::sort(sectors.begin(), sectors.end());
  EXPECT_EQ(sectors, sequence(0, 19 * 8, 8)) << r;
  EXPECT_EQ(words(out[1])[0], "0.000000") << r;  // times count from the first
}

TEST_F(E2eIoScripts, BiosnoopQueuedAddsAColumn) {
  LoopDevice loop;
  auto r = trace_direct_writes({"biosnoop", "-Q", "-d", loop.name()}, loop, 5);
  ASSERT_EQ(r.exit_code, 0) << r;
  auto out = lines(r.out);
  ASSERT_EQ(out.size(), 6u) << r;
  EXPECT_EQ(words(out[0]).at(7), "QUE(ms)") << r;
  for (size_t i = 1; i < out.size(); i++)
    EXPECT_EQ(words(out[i]).size(), 9u) << out[i];
  EXPECT_TRUE(one_line_error(run(mt({"biosnoop", "-d", "nosuchdisk"})),
                             {"biosnoop.lua:", "no such disk 'nosuchdisk'"}));
}

// On a kernel without BTF the block scripts read the tracepoints' own
// fields: requests keyed by (dev, sector), the disk as its dev_t, the
// operation from rwbs. Forced here by hiding every other probe kind.
TEST_F(E2eIoScripts, BlockioOnTheTracepointsOwnFields) {
  LoopDevice loop;
  auto r =
      trace_direct_writes({script("blockio_tracepoints.lua"), "--disk", loop.name()}, loop, 10);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.out, "-Q needs the kernel's BTF (struct request)\n")) << r;
  EXPECT_EQ(values_of(r.out, "sector"), sequence(0, 72, 8)) << r;
  EXPECT_EQ(values_of(r.out, "dev"), std::vector<uint64_t>(10, loop.dev())) << r;
  EXPECT_EQ(values_of(r.out, "bytes"), std::vector<uint64_t>(10, 4096)) << r;
  size_t writes = 0;
  for (const auto &line : lines(r.out))
    writes += contains(line, "typed=false ") && contains(line, " op=W");
  EXPECT_EQ(writes, 10u) << r;
}

}  // namespace
}  // namespace e2e
