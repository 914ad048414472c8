// Files moontrace reads and writes as root, beyond what the catalogue's
// one-shot cases show: the object cache over several runs, output files
// that are replaced only once tracing begins, and write errors on a full
// filesystem, a full device and a closed pipe.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/e2e_support.h"

namespace e2e {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

// Compiles a BPF program (so that the cache is used) and stops at once.
const char *kProbeScript = "probe(\"tracepoint:syscalls:sys_enter_getppid\")\nexit()\n";
// Prints 20 lines, with no BPF program at all.
const char *kPrintScript =
    "probe(\"begin\", function() for i = 1, 20 do print(i) end exit() end)\n";
// Prints a kilobyte every millisecond until stopped.
const char *kFloodScript =
    "probe(\"interval:ms:1\", function() for i = 1, 8 do print(string.rep(\"x\", 127)) end end)\n";

struct stat stat_of(const std::string &path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st;
}

std::vector<std::string> objects_in(const std::string &dir, const std::string &suffix = "") {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto &e : fs::directory_iterator(dir, ec))
    if (e.path().string().ends_with(suffix))
      found.push_back(e.path().string());
  return found;
}

class E2eFiles : public BpfTest {
 protected:
  Command in_dir(std::vector<std::string> args) {
    Command c = mt(std::move(args));
    c.cwd = dir_.path().string();
    c.env.push_back({"MOONTRACE_CACHE", dir_.file("cache")});
    return c;
  }
  TempDir dir_;
};

TEST_F(E2eFiles, CacheIs0700WithObjects0600WhateverTheUmask) {
  dir_.write("t.lua", kProbeScript);
  mode_t old = umask(0);
  auto r = run(in_dir({"t.lua"}));
  umask(old);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(stat_of(dir_.file("cache")).st_mode & 07777, 0700u);
  auto objects = objects_in(dir_.file("cache"), ".o");
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(stat_of(objects[0]).st_mode & 07777, 0600u);
  r = run(in_dir({"-v", "t.lua"}));
  EXPECT_TRUE(contains(r.err, "using cached object")) << r;
}

TEST_F(E2eFiles, CachedObjectOfAnotherUserIsRefused) {
  dir_.write("t.lua", kProbeScript);
  ASSERT_EQ(run(in_dir({"t.lua"})).exit_code, 0);
  auto objects = objects_in(dir_.file("cache"), ".o");
  ASSERT_EQ(objects.size(), 1u);
  ASSERT_EQ(chown(objects[0].c_str(), kNobody, kNobody), 0);
  auto r = run(in_dir({"t.lua"}));
  EXPECT_TRUE(one_line_error(
      r, {"refusing to load the cached object " + objects[0],
          "belongs to another user (owner nobody uid 65534, mode 0600)", "remove it"}));
  EXPECT_EQ(run(in_dir({"--no-cache", "t.lua"})).exit_code, 0);
}

TEST_F(E2eFiles, DamagedCachedObjectIsCompiledAgain) {
  dir_.write("t.lua", kProbeScript);
  ASSERT_EQ(run(in_dir({"t.lua"})).exit_code, 0);
  auto objects = objects_in(dir_.file("cache"), ".o");
  ASSERT_EQ(objects.size(), 1u);
  std::string bytes = read_file(objects[0]);
  bytes[bytes.size() / 2] ^= 0x55;
  std::ofstream(objects[0], std::ios::binary | std::ios::trunc) << bytes;
  auto r = run(in_dir({"-v", "t.lua"}));
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_FALSE(contains(r.err, "using cached object")) << r;
  r = run(in_dir({"-v", "t.lua"}));
  EXPECT_TRUE(contains(r.err, "using cached object")) << r;  // stored again, whole
}

TEST_F(E2eFiles, ATraceReplacesTheEarlierOneOnlyOnceTracingBegins) {
  dir_.write("uring.fxt", "an earlier run's trace");
  auto r = run(in_dir({"-c", workload("uring_demo"), "uring"}), 60s);
  ASSERT_EQ(r.exit_code, 0) << r;
  std::string trace = read_file(dir_.file("uring.fxt"));
  EXPECT_EQ(trace.substr(0, 8), std::string("\x10\x00\x04\x46\x78\x54\x16\x00", 8));
  EXPECT_EQ(stat_of(dir_.file("uring.fxt")).st_mode & 07777, 0600u);
  EXPECT_EQ(objects_in(dir_.path().string()).size(), 2u);  // uring.fxt and cache: no leftovers
}

TEST_F(E2eFiles, WithDashOTheScriptsOwnNameIsNeitherUsedNorChecked) {
  dir_.write(
      "t.lua",
      "fxt{ file = \"/etc/x.fxt\" }\nprobe(\"tracepoint:syscalls:sys_enter_getppid\")\nexit()\n");
  auto r = run(in_dir({"-o", "mine.fxt", "t.lua"}));
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(fs::exists(dir_.file("mine.fxt")));
  EXPECT_FALSE(fs::exists("/etc/x.fxt"));
}

TEST_F(E2eFiles, DashODevStdoutWritesToTheOutputItself) {
  dir_.write("t.lua", kPrintScript);
  auto r = run(in_dir({"-o", "/dev/stdout", "t.lua"}));
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(lines(r.out).size(), 20u) << r;
}

TEST_F(E2eFiles, ATrustedLinkAtDashOIsFollowed) {
  dir_.write("real.txt", "earlier");
  ASSERT_EQ(symlink("real.txt", dir_.file("out.txt").c_str()), 0);
  dir_.write("t.lua", kPrintScript);
  auto r = run(in_dir({"-o", "out.txt", "t.lua"}));
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(lines(read_file(dir_.file("real.txt"))).size(), 20u);
  EXPECT_TRUE(fs::is_symlink(dir_.file("out.txt")));
}

TEST_F(E2eFiles, UnderSudoOutputInTheUsersDirectoryIsTheirs) {
  fs::create_directories(dir_.file("theirs"));
  ASSERT_EQ(chown(dir_.file("theirs").c_str(), kNobody, kNobody), 0);
  dir_.write("t.lua", kPrintScript);
  Command c = in_dir({"-o", "theirs/out.txt", "t.lua"});
  c.env.push_back({"SUDO_UID", "65534"});
  c.env.push_back({"SUDO_GID", "65534"});
  auto r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  auto st = stat_of(dir_.file("theirs/out.txt"));
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  c.argv[2] = "out.txt";  // in the test's directory, root's: stays root's
  ASSERT_EQ(run(c).exit_code, 0);
  EXPECT_EQ(stat_of(dir_.file("out.txt")).st_uid, 0u);
}

// A 64 KiB tmpfs, unmounted at the end.
class SmallFilesystem {
 public:
  explicit SmallFilesystem(const std::string &path) : path_(path) {
    fs::create_directories(path);
    mounted_ = mount("tmpfs", path.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~SmallFilesystem() {
    if (mounted_)
      umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string path_;
  bool mounted_ = false;
};

TEST_F(E2eFiles, AFullFilesystemEndsTheRunWithTheRecordsThatReachedIt) {
  SmallFilesystem small(dir_.file("small"));
  ASSERT_TRUE(small.mounted());
  dir_.write("flood.lua", kFloodScript);
  for (std::string name : {"t.fxt", "t.fxt.gz", "t.txt"}) {
    std::string path = dir_.file("small/" + name);
    Command c = name == "t.txt"
                    ? in_dir({"-o", path, "flood.lua"})
                    : in_dir({"-o", path, "-c", workload("nop_storm") + " 2000000", "uring"});
    dir_.write("small/" + name, "an earlier run's");
    auto r = run(c, 60s);
    EXPECT_TRUE(one_line_error(
        r, {"cannot write " + path + ": No space left on device (", " records reached it)"}))
        << name;
    EXPECT_FALSE(contains(r.err, "wrote ")) << r;
    // The earlier file is back, and nothing else is left.
    EXPECT_EQ(read_file(path), "an earlier run's") << name;
    auto left = fs::directory_iterator(dir_.file("small"));
    EXPECT_EQ(std::distance(left, fs::directory_iterator()), 1) << name;
    unlink(path.c_str());
  }
}

TEST_F(E2eFiles, ATraceOnAFullDeviceFails) {
  auto r = run(in_dir({"-o", "/dev/full", "-c", workload("nop_storm") + " 1000", "uring"}), 60s);
  EXPECT_TRUE(one_line_error(r, {"cannot write /dev/full: No space left on device (0 of "}));
}

TEST_F(E2eFiles, AClosedPipeEndsTheRunWithOneLine) {
  dir_.write("flood.lua", kFloodScript);
  Command c;
  c.argv = {"bash", "-c", "'" + moontrace() + "' flood.lua | true; exit ${PIPESTATUS[0]}"};
  c.cwd = dir_.path().string();
  c.env.push_back({"MOONTRACE_CACHE", dir_.file("cache")});
  auto r = run(c);
  EXPECT_TRUE(one_line_error(r, {"cannot write standard output: Broken pipe (0 of "}));
}

}  // namespace
}  // namespace e2e
