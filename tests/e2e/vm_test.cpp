// moontrace on Debian's stock 6.1 kernel, in a virtual machine booted by
// tests/vm/run.sh: the probe kinds this machine's kernel lacks (kprobe,
// fentry/fexit) and uring.lua on 6.1's older io_uring tracepoints
// (io_uring_submit_sqe). Booting costs seconds under TCG, so one test boots
// once and runs every check in one guest shell script; each check leaves
// NAME.out, NAME.err and NAME.rc in a folder shared read-write with the VM.
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>

#include "tests/e2e/uring_trace.h"

namespace e2e {
namespace {

bool in_ci() {
  const char *ci = std::getenv("CI");
  return ci && (std::string(ci) == "true" || std::string(ci) == "1");
}

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
    if (!why)
      return;
    if (in_ci())
      FAIL() << "the VM cannot run (" << *why << ") and CI=true: VM tests must run in CI";
    GTEST_SKIP() << "the VM cannot run: " << *why;
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

// Counts vfs_read calls asking for 12345 bytes through fentry, and their
// return values through fexit.
constexpr const char *kFentryScript = R"(
local n = 0
probe("fentry:vfs_read", { filter = "args.count == 12345" }, function() n = n + 1 end)
probe("fexit:vfs_read", { filter = "args.count == 12345", capture = { ret = "retval" } })
probe("end", function() printf("fentry_reads=%d\n", n) end)
)";
constexpr size_t kDataBytes = 1000;

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

TEST_F(E2eVm, Kernel61KprobesFentryAndUringTrace) {
  TempDir dir;
  const std::string d = dir.path().string();
  dir.write("fentry.lua", kFentryScript);
  dir.write("data", std::string(kDataBytes, 'x'));
  const std::string mt = quote(moontrace()), trace = quote(dir.file("u.fxt"));
  const std::vector<std::pair<std::string, std::string>> checks = {
      {"uname", "uname -r"},
      {"list_kprobe", mt + " -l kprobe:vfs_read"},
      {"list_fentry", mt + " -lv fentry:vfs_read"},
      {"kprobe", mt + " -v -c 'cat /dev/null' " + quote(script("kprobe_fallback.lua"))},
      {"fentry", mt + " -c 'dd if=" + dir.file("data") + " of=/dev/null bs=12345' " +
                     quote(dir.file("fentry.lua"))},
      {"uring", mt + " -v -o " + trace + " -c " + quote(workload("uring_demo")) + " uring"},
      {"dump", mt + " dump " + trace + " | head -40"},
  };
  std::string sh = "D=" + quote(d) + "\ncd \"$D\"\n";
  for (const auto &[name, command] : checks)
    sh += "(" + command + ") >$D/" + name + ".out 2>$D/" + name + ".err; echo $? >$D/" + name +
          ".rc\n";
  dir.write("checks.sh", sh);

  auto vm = run(
      {{run_sh(), "--timeout", "100", "--console", "--rw", d, "--", "sh", dir.file("checks.sh")}},
      110s);
  ASSERT_EQ(vm.exit_code, 0) << vm;
  std::smatch m;
  if (std::regex_search(vm.err, m, std::regex("guest uptime at command start ([0-9.]+) s")))
    std::cout << "[ vm       ] boot to command: " << m[1] << " s of guest uptime\n";

  auto result = [&](const std::string &name) {
    Check c{name, read_file(dir.file(name + ".out")), read_file(dir.file(name + ".err"))};
    c.rc = std::atoi(read_file(dir.file(name + ".rc")).c_str());
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

  // The probe list's first alternative, the kprobe, is used and attaches.
  auto kprobe = result("kprobe");
  EXPECT_EQ(kprobe.rc, 0) << kprobe;
  EXPECT_TRUE(contains(kprobe.err, "using kprobe:vfs_read")) << kprobe;
  EXPECT_TRUE(contains(kprobe.err, "attached kprobe:vfs_read")) << kprobe;
  EXPECT_FALSE(values_of(kprobe.out, "count").empty()) << kprobe;

  // fentry and fexit attach and see dd's two reads: the data, then EOF.
  auto fentry = result("fentry");
  EXPECT_EQ(fentry.rc, 0) << fentry;
  EXPECT_TRUE(contains(fentry.out, "fentry_reads=2\n")) << fentry;
  EXPECT_EQ(values_of(fentry.out, "ret"), (std::vector<uint64_t>{0, kDataBytes})) << fentry;
  EXPECT_TRUE(contains(fentry.err, ", 0 lost")) << fentry;

  // uring.lua falls back to 6.1's io_uring_submit_sqe and draws every
  // submitted request of uring_demo as a submit slice beginning a flow.
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
  auto dump = result("dump");
  EXPECT_EQ(dump.rc, 0) << dump;
  EXPECT_TRUE(contains(dump.out, " io_uring/submit ")) << dump;
}

}  // namespace
}  // namespace e2e
