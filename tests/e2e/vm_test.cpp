// moontrace on Debian's stock 6.1 kernel, in a virtual machine booted by
// tests/vm/run.sh: the probe kinds this machine's kernel lacks (kprobe,
// kretprobe, fentry, fexit, on vfs_read and on a block function), the
// shipped scripts with the probes they prefer there (kprobes, ext4 as a
// module), uring.lua on 6.1's older io_uring tracepoints
// (io_uring_submit_sqe), and the layers added to its trace with the
// kprobe and fentry variants (uring_fs, uring_block, iostack -o). Booting
// costs seconds under TCG, so one test boots once and runs every check in
// one guest shell script; each check leaves NAME.out, NAME.err, NAME.rc
// and NAME.secs in a folder shared read-write with the VM.
// Over 500 lines: the checks share one boot, so they are one test.
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "common/sha256.h"
#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

std::string run_sh() {
  return std::string(MT_SOURCE_DIR) + "/tests/vm/run.sh";
}

// Why the VM cannot run here, or nothing when it can.
std::optional<std::string> vm_unavailable() {
  if (geteuid() != 0)
    return "not running as root";
  if (access(run_sh().c_str(), X_OK) != 0)
    return run_sh() + " is missing";
  bool qemu = false;
  for (const char *dir : {"/usr/bin/", "/usr/local/bin/"})
    qemu |= access((std::string(dir) + "qemu-system-x86_64").c_str(), X_OK) == 0;
  if (!qemu)
    return "no qemu-system-x86_64 (package qemu-system-x86)";
  glob_t g;
  bool kernel = glob("/boot/vmlinuz-6.1.*", 0, nullptr, &g) == 0;
  globfree(&g);
  if (!kernel)
    return "no /boot/vmlinuz-6.1.* (package linux-image-amd64)";
  return std::nullopt;
}

class E2eVm : public ::testing::Test {
 protected:
  void SetUp() override {
    static const std::optional<std::string> why = vm_unavailable();
    skip_unless_ci(why, "the VM cannot run");
  }
};

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// One check's results, read back from the shared folder.
struct Check {
  std::string name, out, err;
  int rc = -1;
};
std::ostream &operator<<(std::ostream &os, const Check &c) {
  return os << "check " << c.name << ": exit " << c.rc << "\n--- stdout:\n"
            << c.out << "--- stderr:\n"
            << c.err;
}

// vfs_read and blk_mq_start_request (where blk-mq hands a request to the
// driver) through each function probe kind, counting what
// `dd if=/dev/vda bs=4k iflag=direct` does: one 4 KiB read(2), so one
// vfs_read and one request, per block. fexit also sends each read's result.
constexpr const char *kKindsScript = R"(
local function counted(name, filter)
  probe(name, { filter = filter, aggregate = count{ name = name:gsub(":", "_") } })
end
counted("kprobe:vfs_read", "args.count == 4096")
counted("kretprobe:vfs_read", "retval == 4096")
counted("fentry:vfs_read", "args.count == 4096")
counted("fexit:vfs_read", "args.count == 4096 && retval == 4096")
counted("kprobe:blk_mq_start_request", "args.rq->__data_len == 4096")
counted("kretprobe:blk_mq_start_request", nil)
counted("fentry:blk_mq_start_request", "args.rq->__data_len == 4096")
counted("fexit:blk_mq_start_request", "args.rq->__data_len == 4096")
probe("fexit:vfs_read", { filter = "args.count == 4096", capture = { ret = "retval" } })
)";
constexpr int kBlocks = 37;

// What file_ops does in the guest (see tests/workloads/file_ops.c), on an
// ext4 made there, with direct reads from /dev/vda.
constexpr int kOpens = 3, kReads = 5, kWrites = 4, kFsyncs = 2, kCreates = 2, kBytes = 8192,
              kDirectReads = 6;

// Guest shell helpers. check NAME CMD: runs CMD. trace NAME ARGS: starts
// moontrace ARGS in the background ({pid}: the pid in $W) and waits until
// it has attached; stop NAME: SIGINT, and its exit code. Tracers that
// watch one workload run side by side: each compiles while the others do.
constexpr const char *kGuestHelpers = R"(
finish() { echo $1 >$D/$2.rc; echo "$(date +%s.%N) - $3" | bc >$D/$2.secs; }
check() {
  n=$1; shift; t=$(date +%s.%N)
  (eval "$@") >$D/$n.out 2>$D/$n.err; finish $? $n $t
}
trace() {
  n=$1; shift
  date +%s.%N >$D/$n.start
  $MT $(echo "$@" | sed "s/{pid}/$W/g") >$D/$n.out 2>$D/$n.err &
  echo $! >$D/$n.pid
}
attached() {
  for n in "$@"; do
    while ! grep -q 'Ctrl-C to stop' $D/$n.err && kill -0 $(cat $D/$n.pid) 2>/dev/null; do
      sleep 0.05
    done
  done
}
stop() {
  for n in "$@"; do kill -INT $(cat $D/$n.pid) 2>/dev/null; done
  for n in "$@"; do wait $(cat $D/$n.pid); finish $? $n $(cat $D/$n.start); done
}
# file_ops stops itself once loaded: $W is its pid.
stopped_file_ops() {
  $FILE_OPS & W=$!
  while ! grep -q '^State:.*T' /proc/$W/status 2>/dev/null && kill -0 $W 2>/dev/null; do
    sleep 0.02
  done
}
)";

// uring_demo's requests that the kernel traces as submitted (see the top of
// uring_demo.c and uring_demo_test.cpp): all but the rejected 5001.
std::vector<uint64_t> submitted_requests() {
  std::vector<uint64_t> all;
  for (const auto &part :
       {sequence(101, 108), sequence(201, 208), std::vector<uint64_t>{301}, sequence(401, 404),
        std::vector<uint64_t>{501, 502}, sequence(1001, 1012),
        std::vector<uint64_t>{2001, 3001, 4001}, sequence(4002, 4003)})
    all.insert(all.end(), part.begin(), part.end());
  std::sort(all.begin(), all.end());
  return all;
}

// The rows of the table under the line starting with `header`, keyed by
// their first `key_columns` words joined with a space.
// The flow ids of the flow steps at the start of `t`'s slices named `name`
// (a hop's flow point is on its thread, at its start).
std::set<uint64_t> flows_stepping_at(const Trace &t, const std::string &name) {
  std::set<std::pair<uint64_t, uint64_t>> starts;  // (tid, ts)
  for (const auto *r : t.named(name))
    starts.insert({r->tid, r->ts});
  std::set<uint64_t> ids;
  for (const auto &r : t.records)
    if (r.type == 4 && r.event_type == 9 && starts.count({r.tid, r.ts}))
      ids.insert(r.extra);
  return ids;
}

// How many of `t`'s slices named `inner` hold a flow step at their start.
size_t steps_at(const Trace &t, const std::string &inner) {
  std::set<std::pair<uint64_t, uint64_t>> steps;  // (tid, ts)
  for (const auto &r : t.records)
    if (r.type == 4 && r.event_type == 9)
      steps.insert({r.tid, r.ts});
  size_t n = 0;
  for (const auto *r : t.named(inner))
    n += steps.count({r->tid, r->ts});
  return n;
}

// How many of `t`'s slices named `inner` are inside one named `outer` on
// their thread.
size_t inside(const Trace &t, const std::string &outer, const std::string &inner) {
  size_t n = 0;
  for (const auto *i : t.named(inner))
    for (const auto *o : t.named(outer))
      n += o->tid == i->tid && o->ts <= i->ts && i->extra <= o->extra;
  return n;
}

std::map<std::string, std::vector<std::string>> table_after(const std::string &out,
                                                            const std::string &header,
                                                            size_t key_columns) {
  std::map<std::string, std::vector<std::string>> rows;
  bool in_table = false;
  for (const auto &line : lines(out)) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string word; in >> word;)
      w.push_back(word);
    if (line.rfind(header, 0) == 0)
      in_table = true;
    else if (in_table && w.size() > key_columns)
      rows[w[0] + (key_columns > 1 ? " " + w[1] : "")] =
          std::vector<std::string>(w.begin() + key_columns, w.end());
  }
  return rows;
}

TEST_F(E2eVm, Kernel61ProbeKindsShippedScriptsAndUringTrace) {
  TempDir dir;
  const std::string d = dir.path().string();
  dir.write("kinds.lua", kKindsScript);
  // A key that would leave a probe sending records less than the 32 bytes
  // of stack 6.1's verifier counts for a global mt_flush's frame.
  dir.write("stack.lua",
            "local c = count{ by = { s = \"str((void *)0, 476)\" } }\n"
            "probe(\"tracepoint:syscalls:sys_enter_getppid\", { aggregate = c, capture = { "
            "\"pid\" } })\n");
  const std::string mt = quote(moontrace()), trace = quote(dir.file("u.fxt"));
  const std::string dd =
      "dd if=/dev/vda of=/dev/null bs=4k count=" + std::to_string(kBlocks) + " iflag=direct";
  std::string file_ops = workload("file_ops") + " -s -o " + std::to_string(kOpens) + " -r " +
                         std::to_string(kReads) + " -w " + std::to_string(kWrites) + " -f " +
                         std::to_string(kFsyncs) + " -c " + std::to_string(kCreates) + " -b " +
                         std::to_string(kBytes) + " -D /dev/vda -n " +
                         std::to_string(kDirectReads) + " /mnt/mt-ext4";
  std::string sh = "D=" + quote(d) + "\ncd \"$D\"\nMT=" + mt + "\nFILE_OPS=" + quote(file_ops) +
                   "\n" + kGuestHelpers;
  auto check = [&](const std::string &name, const std::string &command) {
    sh += "check " + name + " " + quote(command) + "\n";
  };
  check("uname", "uname -r");
  check("stack", mt + " --duration 1 " + quote(dir.file("stack.lua")));
  check("list_kprobe", mt + " -l kprobe:vfs_read");
  check("list_fentry", mt + " -lv fentry:vfs_read");
  check("kprobe", mt + " -v -c 'cat /dev/null' " + quote(script("kprobe_fallback.lua")));
  check("kinds", mt + " -c " + quote(dd) + " " + quote(dir.file("kinds.lua")));
  check("uring", mt + " -v -o " + trace + " -c " + quote(workload("uring_demo")) + " uring");
  check("dump", mt + " dump " + trace + " | head -40");
  check("overflow", mt + " -c " + quote(workload("uring_overflow") + " 10") + " uring");
  // Block devices untouched by anything else: the ext4 on a loop device
  // (backed by the guest's tmpfs), direct reads from the blank /dev/vda.
  sh +=
      "trace biolatency biolatency -D -d vda\ntrace biosnoop biosnoop -d vda\n"
      "attached biolatency biosnoop\n" +
      dd + " 2>/dev/null\nstop biolatency biosnoop\n";
  check("ext4",
        "modprobe ext4 && modprobe loop && truncate -s 64M /tmp/mt-ext4.img && "
        "L=$(losetup -f --show /tmp/mt-ext4.img) && mkfs.ext4 -q -F $L && "
        "mkdir -p /mnt/mt-ext4 && mount -t ext4 $L /mnt/mt-ext4");
  // fio's buffered writes on its default ring (DEFER_TASKRUN): ext4 punts
  // each to an io-worker; with fentry each one an io-worker runs is a step
  // of its flow there, drawn when it ends, after the completion the worker
  // posted inside it (on 6.1 the worker posts it, DEFER_TASKRUN or not).
  // With uring_fs, ext4's write (a kprobe) is a step of the same flow, on
  // the same io-worker, holding the write's copy into the page cache.
  check("defer", "dd if=/dev/zero of=/mnt/mt-ext4/w bs=64k count=4 status=none && " + mt + " -o " +
                     quote(dir.file("d.fxt")) +
                     " -c 'fio --name=w --filename=/mnt/mt-ext4/w --ioengine=io_uring "
                     "--rw=write --bs=4k --size=256k --iodepth=8 --output=/dev/null' uring_fs");
  // Buffered reads of a file whose page cache fio drops: on 6.1, where a
  // read's kiocb keeps ki_waitq from its last use, uring.lua finds the
  // wait armed on the page by the request's async_data.
  // With uring_fs: fentry on io_issue_sqe tells which request runs ext4's
  // read, inline and again from task work once its page came in.
  check("retried",
        "dd if=/dev/urandom of=/mnt/mt-ext4/r bs=1M count=1 conv=fsync status=none && " + mt +
            " -o " + quote(dir.file("r.fxt")) +
            " -c 'fio --name=job --filename=/mnt/mt-ext4/r --ioengine=io_uring --invalidate=1 "
            "--pre_read=0 --bs=4k --iodepth=8 --size=1M --rw=randread --output=/dev/null' "
            "uring_fs");
  // uring_block: each direct write's block request (the loop device
  // merging none) in the request's flow, through a kprobe on 6.1.
  check("block",
        "echo 2 >/sys/block/$(basename $(findmnt -no SOURCE /mnt/mt-ext4))/queue/nomerges && " +
            mt + " -o " + quote(dir.file("b.fxt")) +
            " -c 'fio --name=b --filename=/mnt/mt-ext4/r --ioengine=io_uring --direct=1 "
            "--rw=write --bs=4k --size=256k --iodepth=8 --output=/dev/null' uring_block");
  // check: which probes two scripts would use on 6.1, compiled and
  // loaded; and 6.1's BTF (ext4's module's too), for check --btf here.
  for (const char *name : {"uring_fs", "iostack"})
    check(std::string("check_") + name, mt + " check " + name);
  check("btf", "mkdir -p btf && for f in /sys/kernel/btf/*; do cat $f >btf/${f##*/}; done");
  // iostack_fentry: the same script with kprobes hidden from it.
  sh += "stopped_file_ops\ntrace iostack -v -o " + quote(dir.file("io.fxt")) +
        " iostack -p {pid} -d vda\n"
        "trace vfsstat -v -p {pid} vfsstat\ntrace ext4slower -v ext4slower -p {pid} 0\n"
        "export MOONTRACE_PATH=" +
        quote(std::string(MT_SOURCE_DIR) + "/scripts") + "\ntrace iostack_fentry -v " +
        quote(script("without_kprobes.lua")) +
        " --script iostack -p {pid} -d vda\n"
        "attached iostack vfsstat ext4slower iostack_fentry\n"
        "kill -CONT $W; wait $W; echo $? >$D/file_ops.rc\n"
        "stop iostack vfsstat ext4slower iostack_fentry\n";
  dir.write("checks.sh", sh);

  // Under TCG the checks take 125-135 s on this project's 2-CPU machines;
  // the margin is for a busy host.
  auto vm = run(
      {{run_sh(), "--timeout", "270", "--console", "--rw", d, "--", "sh", dir.file("checks.sh")}},
      275s);
  ASSERT_EQ(vm.exit_code, 0) << vm;
  std::smatch m;
  if (std::regex_search(vm.err, m, std::regex("guest uptime at command start ([0-9.]+) s")))
    std::cout << "[ vm       ] boot to command: " << m[1] << " s of guest uptime\n";

  auto result = [&](const std::string &name) {
    Check c{name, read_file(dir.file(name + ".out")), read_file(dir.file(name + ".err"))};
    c.rc = std::atoi(read_file(dir.file(name + ".rc")).c_str());
    std::string secs = read_file(dir.file(name + ".secs"));
    std::cout << "[ vm       ] " << name << ": " << secs.substr(0, secs.find('\n')) << " s\n";
    return c;
  };

  auto uname = result("uname");
  EXPECT_EQ(uname.out.rfind("6.1.", 0), 0u) << uname;

  // 6.1 has kprobes: -l lists vfs_read as a kprobe, -lv shows fentry's
  // typed arguments from BTF.
  auto list_kprobe = result("list_kprobe");
  EXPECT_EQ(list_kprobe.rc, 0) << list_kprobe;
  EXPECT_EQ(list_kprobe.out, "kprobe:vfs_read\n") << list_kprobe;
  auto list_fentry = result("list_fentry");
  EXPECT_EQ(list_fentry.rc, 0) << list_fentry;
  auto fields = lines(list_fentry.out);
  ASSERT_FALSE(fields.empty()) << list_fentry;
  EXPECT_EQ(fields[0], "fentry:vfs_read") << list_fentry;
  for (const char *f : {"    struct file * file", "    size_t count", "    ssize_t retval"})
    EXPECT_NE(std::find(fields.begin(), fields.end(), f), fields.end()) << f << "\n" << list_fentry;

  // 6.1 has no private stacks: mt_flush is inlined, and the probe loads.
  auto stack = result("stack");
  EXPECT_EQ(stack.rc, 0) << stack;
  EXPECT_TRUE(contains(stack.err, "attached 1 probe")) << stack;

  // The probe list's first alternative, the kprobe, is used and attaches.
  auto kprobe = result("kprobe");
  EXPECT_EQ(kprobe.rc, 0) << kprobe;
  EXPECT_TRUE(contains(kprobe.err, "using kprobe:vfs_read")) << kprobe;
  EXPECT_TRUE(contains(kprobe.err, "attached kprobe:vfs_read")) << kprobe;
  EXPECT_FALSE(values_of(kprobe.out, "count").empty()) << kprobe;

  // Every kind attaches to both functions and counts each of dd's reads
  // and requests; fexit sends each result.
  auto kinds = result("kinds");
  EXPECT_EQ(kinds.rc, 0) << kinds;
  for (const char *kind : {"kprobe", "kretprobe", "fentry", "fexit"})
    for (const char *fn : {"vfs_read", "blk_mq_start_request"})
      EXPECT_TRUE(contains(
          kinds.out, "@" + std::string(kind) + "_" + fn + ": " + std::to_string(kBlocks) + "\n"))
          << kind << ":" << fn << "\n"
          << kinds;
  EXPECT_EQ(values_of(kinds.out, "ret"), std::vector<uint64_t>(kBlocks, 4096)) << kinds;
  EXPECT_TRUE(contains(kinds.err, ", 0 lost")) << kinds;

  // uring.lua falls back to 6.1's io_uring_submit_sqe and draws every
  // submitted request of uring_demo as a submit slice beginning a flow.
  // 6.1 fires io_uring_complete for a completion before finding it no
  // room, then io_uring_cqe_overflow: each is counted once.
  auto overflow = result("overflow");
  EXPECT_EQ(overflow.rc, 0) << overflow;
  EXPECT_TRUE(contains(overflow.err, "io_uring: 40 requests completed")) << overflow;
  EXPECT_TRUE(contains(overflow.err, "36 completions found the completion queue full")) << overflow;
  auto uring = result("uring");
  EXPECT_EQ(uring.rc, 0) << uring;
  EXPECT_TRUE(contains(uring.err, "io_uring_submit_sqe")) << uring;
  EXPECT_TRUE(contains(uring.err, ", 0 lost")) << uring;
  auto problems = mt::testing::perfetto_problems_in_file(dir.file("u.fxt"));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  Trace t;
  t.records = mt::read_fxt(read_file(dir.file("u.fxt")));
  std::vector<uint64_t> submitted;
  for (const auto *r : t.named("submit"))
    submitted.push_back(arg(*r, "user_data"));
  std::sort(submitted.begin(), submitted.end());
  EXPECT_EQ(submitted, submitted_requests());
  EXPECT_GE(t.flow_points(8), submitted.size());
  EXPECT_EQ(t.flow_points(8), t.flow_points(10));
  EXPECT_FALSE(t.named("complete").empty());
  // 6.1 has fentry: each request an io-worker runs is an issue slice on
  // the worker, a step of the request's flow.
  EXPECT_TRUE(contains(uring.err, "fentry:io_issue_sqe")) << uring;
  auto thread_names = t.thread_names_by_tid();
  auto issues = t.named("issue");
  EXPECT_EQ(issues.empty(), t.named("queue_async_work").empty());
  EXPECT_GE(issues.size(), t.named("queue_async_work").size());
  for (const auto *r : issues)
    EXPECT_EQ(thread_names[r->tid].rfind("iou-wrk-", 0), 0u) << thread_names[r->tid];
  EXPECT_EQ(flows_stepping_at(t, "issue"), flows_stepping_at(t, "queue_async_work"));
  std::cout << "[ vm       ] uring_demo: " << issues.size() << " issue slices on io-workers, "
            << t.named("queue_async_work").size() << " requests punted\n";
  auto dump = result("dump");
  EXPECT_EQ(dump.rc, 0) << dump;
  EXPECT_TRUE(contains(dump.out, " io_uring/submit ")) << dump;

  // biolatency and biosnoop: a kprobe where requests are issued (args.rq),
  // the completion tracepoint (args.arg0), each of dd's requests once.
  auto biolatency = result("biolatency");
  EXPECT_EQ(biolatency.rc, 0) << biolatency;
  std::smatch bucket;
  uint64_t in_histogram = 0;
  std::string rest = biolatency.out;
  while (std::regex_search(rest, bucket, std::regex(R"(-> \d+\s+: (\d+)\s+\|)"))) {
    in_histogram += std::stoull(bucket[1]);
    rest = bucket.suffix();
  }
  EXPECT_EQ(in_histogram, uint64_t(kBlocks)) << biolatency;
  EXPECT_TRUE(contains(biolatency.out, "\ndisk = 'vda'\n")) << biolatency;
  auto biosnoop = result("biosnoop");
  EXPECT_EQ(biosnoop.rc, 0) << biosnoop;
  auto snooped = lines(biosnoop.out);
  ASSERT_EQ(snooped.size(), size_t(kBlocks + 1)) << biosnoop;
  std::vector<uint64_t> sectors;
  for (size_t i = 1; i < snooped.size(); i++) {
    std::smatch f;
    ASSERT_TRUE(
        std::regex_search(snooped[i], f, std::regex(R"(^\S+\s+dd\s+\d+\s+vda\s+R (\d+)\s+4096\s)")))
        << snooped[i];
    sectors.push_back(std::stoull(f[1]));
  }
  std::sort(sectors.begin(), sectors.end());
  EXPECT_EQ(sectors, sequence(0, (kBlocks - 1) * 8, 8)) << biosnoop;

  auto ext4 = result("ext4");
  ASSERT_EQ(ext4.rc, 0) << ext4;
  auto defer = result("defer");
  EXPECT_EQ(defer.rc, 0) << defer;
  problems = mt::testing::perfetto_problems_in_file(dir.file("d.fxt"));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  Trace writes;
  writes.records = mt::read_fxt(read_file(dir.file("d.fxt")));
  auto fio_ring = writes.named("create");
  ASSERT_EQ(fio_ring.size(), 1u) << defer;
  EXPECT_TRUE(arg(*fio_ring[0], "flags") & (1 << 13)) << defer;  // IORING_SETUP_DEFER_TASKRUN
  auto punted = flows_stepping_at(writes, "queue_async_work");
  EXPECT_EQ(punted.size(), 64u) << defer;
  EXPECT_EQ(flows_stepping_at(writes, "issue"), punted) << defer;
  auto writes_threads = writes.thread_names_by_tid();
  for (const auto *r : writes.named("issue"))
    EXPECT_EQ(writes_threads[r->tid].rfind("iou-wrk-", 0), 0u) << writes_threads[r->tid];
  std::cout << "[ vm       ] fio's DEFER_TASKRUN writes: " << punted.size() << " punted, "
            << writes.named("issue").size() << " issue slices on io-workers\n";
  // Each write's ext4 write_iter inside its issue slice, in its flow.
  EXPECT_EQ(inside(writes, "issue", "write_iter"), 64u) << defer;
  EXPECT_EQ(flows_stepping_at(writes, "write_iter"), punted) << defer;
  EXPECT_EQ(flows_stepping_at(writes, "write_begin"), punted) << defer;
  auto retried = result("retried");
  EXPECT_EQ(retried.rc, 0) << retried;
  auto paths = table_after(retried.err, "OPCODE", 2);
  uint64_t retried_reads = paths.count("READ retried") ? std::stoull(paths["READ retried"][0]) : 0;
  uint64_t inline_reads = paths.count("READ inline") ? std::stoull(paths["READ inline"][0]) : 0;
  std::cout << "[ vm       ] uncached reads: " << retried_reads << " retried, " << inline_reads
            << " inline\n";
  EXPECT_EQ(retried_reads + inline_reads, 256u) << retried;
  EXPECT_GE(retried_reads, 240u) << retried;
  problems = mt::testing::perfetto_problems_in_file(dir.file("r.fxt"));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  Trace reads;
  reads.records = mt::read_fxt(read_file(dir.file("r.fxt")));
  // Each read's first issue and each retried one's next ones run ext4's
  // read, each in the read's flow.
  EXPECT_GE(reads.named("read_iter").size(), 256u + retried_reads) << retried;
  EXPECT_EQ(flows_stepping_at(reads, "read_iter").size(), 256u) << retried;
  EXPECT_EQ(steps_at(reads, "read_iter"), reads.named("read_iter").size()) << retried;

  auto block = result("block");
  EXPECT_EQ(block.rc, 0) << block;
  problems = mt::testing::perfetto_problems_in_file(dir.file("b.fxt"));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  if (problems.empty()) {
    Trace direct;
    direct.records = mt::read_fxt(read_file(dir.file("b.fxt")));
    EXPECT_EQ(flows_stepping_at(direct, "block_issue").size(), 64u) << block;
    EXPECT_EQ(flows_stepping_at(direct, "block_complete"), flows_stepping_at(direct, "block_issue"))
        << block;
  }

  // iostack: all four layers, kprobes on the vfs, ext4 (a module on 6.1)
  // and where requests are issued; each operation as often as file_ops
  // did it.
  auto iostack = result("iostack");
  EXPECT_EQ(iostack.rc, 0) << iostack;
  EXPECT_EQ(read_file(dir.file("file_ops.rc")), "0\n");
  EXPECT_FALSE(contains(iostack.err, "cannot be traced")) << iostack;
  for (const char *probe :
       {"kprobe:vfs_read", "kretprobe:vfs_fsync_range", "kprobe:ext4_file_read_iter",
        "kretprobe:ext4_sync_file", "kprobe:blk_mq_start_request", "tp_btf:block_rq_complete"})
    EXPECT_TRUE(contains(iostack.err, "moontrace: attached " + std::string(probe) + "\n"))
        << probe << "\n"
        << iostack;
  const std::map<std::string, int> expected = {
      {"syscall sys_read", kReads + kDirectReads},
      {"syscall sys_write", kWrites},
      {"syscall sys_open", kOpens + 1},
      {"syscall sys_fsync", kFsyncs},
      {"vfs vfs_read", kReads + kDirectReads},
      {"vfs vfs_write", kWrites},
      {"vfs vfs_open", kOpens + 1},
      {"vfs vfs_fsync_range", kFsyncs},
      {"ext4 ext4_file_read_iter", kReads},
      {"ext4 ext4_file_write_iter", kWrites},
      {"ext4 ext4_file_open", kOpens},
      {"ext4 ext4_sync_file", kFsyncs},
      {"blk blk_request", kDirectReads},
  };
  auto expect_every_layer = [&](const Check &c) {
    auto table = table_after(c.out, "LAYER    OPERATION", 2);
    EXPECT_EQ(table.size(), expected.size()) << c;
    for (const auto &[op, count] : expected) {
      ASSERT_TRUE(table.count(op)) << op << "\n" << c;
      EXPECT_EQ(table[op][0], std::to_string(count)) << op << "\n" << c;
    }
  };
  expect_every_layer(iostack);
  // Its trace: each of file_ops's reads and writes through ext4 a slice in
  // the vfs's, in the system call's.
  problems = mt::testing::perfetto_problems_in_file(dir.file("io.fxt"));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, first: " << problems[0];
  Trace io;
  io.records = mt::read_fxt(read_file(dir.file("io.fxt")));
  EXPECT_EQ(inside(io, "vfs_read", "ext4_file_read_iter"), size_t(kReads)) << iostack;
  EXPECT_EQ(inside(io, "vfs_write", "ext4_file_write_iter"), size_t(kWrites)) << iostack;
  EXPECT_EQ(inside(io, "sys_pwrite64", "vfs_write"), size_t(kWrites)) << iostack;

  // Without kprobes it falls back to fentry and fexit, on ext4's module
  // functions too, and counts the same.
  auto iostack_fentry = result("iostack_fentry");
  EXPECT_EQ(iostack_fentry.rc, 0) << iostack_fentry;
  EXPECT_FALSE(contains(iostack_fentry.err, "cannot be traced")) << iostack_fentry;
  for (const char *probe :
       {"fentry:vfs_read", "fexit:vfs_fsync_range", "fentry:ext4_file_read_iter",
        "fexit:ext4_sync_file", "fentry:blk_mq_start_request"})
    EXPECT_TRUE(contains(iostack_fentry.err, "moontrace: attached " + std::string(probe) + "\n"))
        << probe << "\n"
        << iostack_fentry;
  EXPECT_FALSE(contains(iostack_fentry.err, "attached kprobe:")) << iostack_fentry;
  expect_every_layer(iostack_fentry);

  // vfsstat: kprobes on the vfs functions themselves.
  auto vfsstat = result("vfsstat");
  EXPECT_EQ(vfsstat.rc, 0) << vfsstat;
  EXPECT_TRUE(contains(vfsstat.err, "moontrace: attached kprobe:vfs_create\n")) << vfsstat;
  EXPECT_FALSE(contains(vfsstat.err, "cannot be traced")) << vfsstat;
  auto totals = table_after(vfsstat.out, "TIME", 1)["TOTAL:"];
  EXPECT_EQ(totals,
            (std::vector<std::string>{std::to_string(kReads + kDirectReads),
                                      std::to_string(kWrites), std::to_string(kFsyncs),
                                      std::to_string(kOpens + 1), std::to_string(kCreates)}))
      << vfsstat;

  // ext4slower: every read, write, open and fsync, with its file.
  auto ext4slower = result("ext4slower");
  EXPECT_EQ(ext4slower.rc, 0) << ext4slower;
  EXPECT_TRUE(contains(ext4slower.err, "moontrace: attached kprobe:ext4_file_open\n"))
      << ext4slower;
  std::map<char, int> by_type;
  for (const auto &line : lines(ext4slower.out)) {
    std::smatch f;
    if (std::regex_search(line, f, std::regex(R"(^\S+ file_ops\s+\d+\s+([RWOS]) .* data$)")))
      by_type[f[1].str()[0]]++;
  }
  EXPECT_EQ(by_type,
            (std::map<char, int>{{'R', kReads}, {'W', kWrites}, {'O', kOpens}, {'S', kFsyncs}}))
      << ext4slower;

  // check on 6.1 loads each script; check --btf here, with 6.1's BTF,
  // picks the probes that check there picked.
  auto btf = result("btf");
  ASSERT_EQ(btf.rc, 0) << btf;
  for (const char *name : {"uring_fs", "iostack"}) {
    auto there = result(std::string("check_") + name);
    EXPECT_EQ(there.rc, 0) << there;
    EXPECT_TRUE(contains(there.out, "loaded: the verifier accepted every program")) << there;
    auto here = run(e2e::mt({"check", "--btf", dir.file("btf"), name}), 120s);
    EXPECT_EQ(here.exit_code, 0) << here;
    EXPECT_TRUE(contains(here.out, "not loaded: that kernel is not the one running here")) << here;
    EXPECT_EQ(probes_used(here.out), probes_used(there.out)) << here << "\n" << there;
  }
}

// A package packed here for Debian's 6.1 (pack --btf with the BTF that a
// first boot copies out) runs there, pinned by its sha256, with the
// libraries of LLVM and Clang replaced by empty files: nothing compiles.
TEST_F(E2eVm, APackagePackedHereRunsOn61WithoutLlvm) {
  TempDir dir;
  const std::string d = dir.path().string();
  auto boot = [&](const std::string &commands) {
    dir.write("boot.sh", "D=" + quote(d) + "\ncd \"$D\"\nMT=" + quote(moontrace()) + "\n" +
                             kGuestHelpers + commands);
    auto vm = run(
        {{run_sh(), "--timeout", "200", "--console", "--rw", d, "--", "sh", dir.file("boot.sh")}},
        205s);
    EXPECT_EQ(vm.exit_code, 0) << vm;
  };
  boot("check btf 'mkdir -p btf && for f in /sys/kernel/btf/*; do cat $f >btf/${f##*/}; done'\n");
  ASSERT_EQ(read_file(dir.file("btf.rc")), "0\n");
  std::string package = dir.file("u61.mtpkg");
  auto packed = run(e2e::mt({"pack", "-o", package, "--btf", dir.file("btf"), "uring"}), 180s);
  ASSERT_EQ(packed.exit_code, 0) << packed;
  std::string sum = mt::sha256_hex(read_file(package));
  // The files the compiler library loads, as the guest sees them too.
  auto libs = run({{"sh", "-c",
                    "ldd " + quote(compiler_library()) +
                        " | awk '/LLVM|clang/ { print $3 }' | xargs readlink -f"}});
  ASSERT_EQ(libs.exit_code, 0) << libs;
  std::string hide;
  for (const auto &lib : lines(libs.out))
    hide += "mount --bind /dev/null " + lib + " && ";
  ASSERT_FALSE(hide.empty()) << libs;
  std::string trace = dir.file("u.fxt");
  boot("check package " +
       quote(hide + "$MT --expect-digest " + sum + " -o " + trace + " -c " +
             workload("uring_demo") + " " + package) +
       "\n");
  std::string rc = read_file(dir.file("package.rc")), err = read_file(dir.file("package.err"));
  EXPECT_EQ(rc, "0\n") << err;
  EXPECT_FALSE(contains(err, "compiler library")) << err;
  Trace t = valid_trace(trace);
  std::set<uint64_t> submitted;
  for (const auto *r : t.named("submit"))
    submitted.insert(arg(*r, "user_data"));
  auto expected = submitted_requests();
  EXPECT_EQ(submitted, std::set<uint64_t>(expected.begin(), expected.end())) << err;
}

}  // namespace
}  // namespace e2e
