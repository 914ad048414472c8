// --cgroup DIR (issue 19, point 4): only tasks in a cgroup v2 directory and
// below it are traced; the test makes its own cgroups, and removes them.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "tests/e2e/e2e_support.h"
#include "tests/fxt_validator.h"
#include "trace/fxt_reader.h"

namespace e2e {
namespace {

// Where cgroup2 is mounted (/sys/fs/cgroup, or .../unified on a hybrid
// system), or "" without one.
std::string cgroup2_root() {
  std::ifstream mounts("/proc/self/mounts");
  for (std::string device, dir, type, rest;
       mounts >> device >> dir >> type && std::getline(mounts, rest);)
    if (type == "cgroup2")
      return dir;
  return "";
}

class E2eCgroup : public BpfTest {
 protected:
  void SetUp() override {
    BpfTest::SetUp();
    if (IsSkipped())
      return;
    std::string root = cgroup2_root();
    skip_unless_ci(root.empty() ? std::optional<std::string>("no cgroup2 mounted") : std::nullopt,
                   "cgroup tests");
    if (root.empty())
      return;
    dir_ = root + "/moontrace-e2e-" + std::to_string(getpid());
    child_ = dir_ + "/child";
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0) << dir_;
    ASSERT_EQ(mkdir(child_.c_str(), 0755), 0) << child_;
  }
  void TearDown() override {
    for (const std::string &d : {child_, dir_})
      if (!d.empty())
        EXPECT_EQ(rmdir(d.c_str()), 0) << d << ": " << std::strerror(errno);
  }
  // Traces, with -p and ARGS, a shell that moves itself to the child
  // cgroup, stops, and once resumed becomes `sh -c SCRIPT` (whose shell
  // calls getppid); stopped with Ctrl-C once it has exited.
  Result trace_a_shell_in_the_child(const std::vector<std::string> &args,
                                    const std::string &script) {
    Process inside({{"sh", "-c",
                     "echo $$ > " + child_ + "/cgroup.procs && kill -STOP $$ && exec sh -c '" +
                         script + "'"}});
    std::string stat = "/proc/" + std::to_string(inside.pid()) + "/stat";
    for (int i = 0; i < 500 && !contains(read_file(stat), ") T "); i++)
      usleep(10000);
    EXPECT_TRUE(contains(read_file(stat), ") T ")) << "the shell did not stop";
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--pid", std::to_string(inside.pid())});
    Process tracer(mt(all));
    if (!tracer.wait_for_err("attached"))
      return tracer.wait();
    inside.resume();
    EXPECT_EQ(inside.wait().exit_code, 0);
    tracer.signal(SIGINT);
    return tracer.wait();
  }
  std::string child_below_root() const { return child_.substr(cgroup2_root().size()); }

  std::string dir_, child_;
};

TEST_F(E2eCgroup, OnlyTasksInTheSubtreeAreTraced) {
  TempDir tmp;
  tmp.write("t.lua",
            "probe(\"tracepoint:syscalls:sys_enter_getppid\", { capture = { \"pid\" } })\n");
  // The directory (level 1 below the root, or more) and its child (one
  // level more): the shells run in the child, in both subtrees.
  for (const std::string &cgroup : {dir_, child_}) {
    Process tracer(mt({"--cgroup", cgroup, tmp.file("t.lua")}));
    ASSERT_TRUE(tracer.wait_for_err("attached")) << tracer.err();
    // Inside: a shell that moves itself to the child cgroup, then becomes
    // another that calls getppid. Outside: the same, staying.
    std::string pid_file = tmp.file("inside.pid");
    for (int i = 0; i < 3; i++) {
      Result in = run({{"sh", "-c",
                        "echo $$ > " + child_ + "/cgroup.procs && echo $$ > " + pid_file +
                            " && exec sh -c true"}});
      ASSERT_EQ(in.exit_code, 0) << in;
      ASSERT_EQ(run({{"sh", "-c", "true"}}).exit_code, 0);
    }
    std::string inside = read_file(pid_file);
    tracer.signal(SIGINT);
    Result r = tracer.wait();
    ASSERT_EQ(r.exit_code, 0) << r;
    auto pids = values_of(r.out, "pid");
    ASSERT_EQ(pids.size(), 3u) << cgroup << r;  // one getppid a run, all inside
    EXPECT_EQ(std::to_string(pids.back()) + "\n", inside) << r;
  }
}

// cgroup_path: the task's cgroup as a path below the hierarchy's root, in
// events and as an aggregation's key.
TEST_F(E2eCgroup, CgroupPathNamesTheTasksCgroup) {
  TempDir tmp;
  tmp.write("t.lua",
            "local by = count{ name = \"calls\", by = { \"cgroup_path\" } }\n"
            "probe(\"tracepoint:syscalls:sys_enter_getppid\", { aggregate = by,\n"
            "  capture = { \"cgroup_path\" }, filter = \"pid == param.pid\" })\n"
            "param(\"pid\", { type = \"int\" })\n");
  Result r = trace_a_shell_in_the_child({"--duration", "30", tmp.file("t.lua")}, "true");
  ASSERT_EQ(r.exit_code, 0) << r;
  std::string relative = child_below_root();  // "/moontrace-e2e-N/child"
  EXPECT_TRUE(contains(r.out, "cgroup_path=" + relative + "\n")) << r;
  EXPECT_TRUE(contains(r.out, relative + "  1\n")) << r;  // the aggregation's row
}

// A trace names each drawn process's cgroup after its name.
TEST_F(E2eCgroup, TheTraceNamesEachProcesssCgroup) {
  TempDir tmp;
  tmp.write("t.lua",
            "fxt{ file = \"t.fxt\" }\n"
            "probe(\"tracepoint:syscalls:sys_enter_getppid\", { filter = \"pid == "
            "param.pid\",\n  draw = { kind = \"instant\", name = \"getppid\" } })\n"
            "param(\"pid\", { type = \"int\" })\n");
  // Named when drawn: it lives on a while after its getppid.
  Result r = trace_a_shell_in_the_child(
      {"-o", tmp.file("t.fxt"), "--duration", "30", tmp.file("t.lua")}, "true; sleep 1");
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(mt::testing::perfetto_problems_in_file(tmp.file("t.fxt")), std::vector<std::string>{});
  std::string relative = child_below_root();
  bool named = false;
  for (const auto &record : mt::read_fxt(read_file(tmp.file("t.fxt"))))
    named |=
        record.type == 7 && record.object_type == 1 && record.name.ends_with(" [" + relative + "]");
  EXPECT_TRUE(named) << r;
}

TEST_F(E2eCgroup, ADirectoryThatIsNoCgroupIsOneLine) {
  TempDir tmp;
  auto r = run(mt({"--cgroup", tmp.path().string(), "x.lua"}));
  EXPECT_TRUE(one_line_error(r, {"--cgroup " + tmp.path().string(), "not a cgroup v2 directory"}));
  r = run(mt({"--cgroup", tmp.file("none"), "x.lua"}));
  EXPECT_TRUE(one_line_error(r, {"--cgroup " + tmp.file("none"), "No such file or directory"}));
}

}  // namespace
}  // namespace e2e
