// Tracing real workloads: every event arrives once, filters and parameters
// select the right ones, -c/-p/-o/--duration and signals behave.
#include <sched.h>
#include <signal.h>
#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "tests/e2e/e2e_support.h"
#include "tests/waiting_thread.h"

namespace e2e {
namespace {

class E2eTracing : public BpfTest {};

std::string nop_storm(int n) {
  return workload("nop_storm") + " " + std::to_string(n);
}

// CPU time process PID used so far, in clock ticks.
uint64_t cpu_ticks(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto fields = words(stat.substr(stat.rfind(')') + 2));
  return fields.size() > 12 ? std::stoull(fields[11]) + std::stoull(fields[12]) : 0;
}

// Waits (up to 30 s) until process PID used no CPU for 200 ms: a tracer
// that has read what was written (a sanitized build on a busy machine may
// take seconds after its workload, which a stop gives only 0.5 s).
void wait_until_idle(pid_t pid) {
  uint64_t before = cpu_ticks(pid);
  for (int i = 0; i < 150; i++) {
    std::this_thread::sleep_for(200ms);
    uint64_t now = cpu_ticks(pid);
    if (now == before)
      return;
    before = now;
  }
}

// Starts `tracing`, runs the stopped `workload` once it is attached, and
// stops it with `stop_signal` when the workload exited and it went idle.
Result trace_until_it_exited(const Command &tracing, Process &workload, int stop_signal) {
  Process tracer(tracing);
  if (!tracer.wait_for_err(kReady)) {
    ADD_FAILURE() << "never attached";
    return tracer.wait(1s);
  }
  workload.resume();
  EXPECT_EQ(workload.wait(60s).exit_code, 0);
  wait_until_idle(tracer.pid());
  tracer.signal(stop_signal);
  return tracer.wait(10s);
}

TEST_F(E2eTracing, CommandCompletionsAreExactlyOneToN) {
  auto r = run(mt({"-c", nop_storm(1000), script("complete.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 1000)) << r;
  EXPECT_TRUE(contains(r.err, "moontrace: 1000 events, 0 lost")) << r;
}

TEST_F(E2eTracing, CommandChildrenAreTraced) {
  auto r = run(
      mt({"-c", "sh -c '" + nop_storm(300) + "; " + nop_storm(200) + "'", script("complete.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto expected = sequence(1, 300);
  auto second = sequence(1, 200);
  expected.insert(expected.end(), second.begin(), second.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(values_of(r.out, "user_data"), expected) << r;
}

// A child of a target leaves the targets once it is gone: a process not
// traced that is given its pid afterwards (here by ns_last_pid) is not
// traced either.
TEST_F(E2eTracing, AGoneChildsPidIsNotTracedWhenReused) {
  TempDir dir;
  std::string child_file = dir.file("child");
  Process shell(Command{{"sh", "-c",
                         nop_storm(300) + " & echo $! > " + child_file + ".new; mv " + child_file +
                             ".new " + child_file + "; wait; exec sleep 60"},
                        {},
                        true});
  Process tracer(mt({"-p", std::to_string(shell.pid()), script("complete.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  shell.resume();
  pid_t child = 0;
  for (int i = 0; i < 300 && !child; i++) {
    std::this_thread::sleep_for(50ms);
    if (std::filesystem::exists(child_file))
      child = std::stoi(read_file(child_file));
  }
  ASSERT_GT(child, 0) << "the shell never ran its child";
  while (kill(child, 0) == 0)  // until the shell reaped it
    std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(200ms);  // the kernel frees it after an RCU grace period

  std::optional<Process> other;
  for (int attempt = 0; attempt < 20 && !(other && other->pid() == child); attempt++) {
    other.reset();
    std::ofstream(std::string("/proc/sys/kernel/ns_last_pid")) << child - 1;
    other.emplace(stopped_nop_storm(700));
  }
  ASSERT_EQ(other->pid(), child) << "no process could be given pid " << child;
  other->resume();
  ASSERT_EQ(other->wait(10s).exit_code, 0);
  wait_until_idle(tracer.pid());
  tracer.signal(SIGINT);
  auto r = tracer.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 300)) << r;
}

// A child given the pid of one reaped just before (before the kernel
// freed that one's task, an RCU grace period later) is traced: the late
// free of the first does not take the second out.
TEST_F(E2eTracing, AChildGivenThePidOfOneJustReapedIsTraced) {
  for (int run_number = 0; run_number < 3; run_number++) {
    // The child waits out the grace period, then runs the storm.
    auto r = run(mt({"-c", workload("pid_reuse") + " sh -c 'sleep 0.3; " + nop_storm(300) + "'",
                     script("complete.lua")}));
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 300)) << r;
  }
}

// A process outside the target's family given the pid of the target's
// child just reaped, before the kernel freed that child's task, is not
// traced: the entry the child left until then is not its.
TEST_F(E2eTracing, AStrangerGivenThePidOfAChildJustReapedIsNotTraced) {
  for (int run_number = 0; run_number < 3; run_number++) {
    TempDir dir;
    std::string pid_file = dir.file("traced");
    Process family(
        Command{{"sh", "-c",
                 "exec " + workload("pid_to_stranger") + " " + nop_storm(300) + " > " + pid_file}});
    pid_t traced = 0;
    for (int i = 0; i < 200 && !traced; i++) {
      std::this_thread::sleep_for(20ms);
      std::string text = read_file(pid_file);
      if (text.ends_with("\n"))
        traced = std::stoi(text);
    }
    ASSERT_GT(traced, 0) << family.wait(1s);
    Process tracer(mt({"-p", std::to_string(traced), script("complete.lua")}));
    ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
    kill(traced, SIGCONT);
    auto f = family.wait(20s);
    ASSERT_EQ(f.exit_code, 0) << f;
    auto r = tracer.wait(10s);  // it stops when the traced child exits
    ASSERT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(values_of(r.out, "user_data"), std::vector<uint64_t>{}) << r;
  }
}

TEST_F(E2eTracing, FilterKeepsExactlyTheMatchingEvents) {
  auto r = run(mt({"-c", nop_storm(500), script("even.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(2, 500, 2)) << r;
  EXPECT_EQ(values_of(r.out, "res"), std::vector<uint64_t>(250, 0)) << r;
}

TEST_F(E2eTracing, ParameterChangesTheFilter) {
  auto r = run(mt({"-c", nop_storm(1000), script("complete.lua"), "--min", "500"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(500, 1000)) << r;

  r = run(mt({"-c", nop_storm(1000), script("complete.lua"), "-m", "990"}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(990, 1000)) << r;
}

TEST_F(E2eTracing, IntervalTicksDuringDurationAndEndRunsOnce) {
  auto r = run(mt({"--duration", "1", script("ticks.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  auto ticks = values_of(r.out, "ticks");
  ASSERT_EQ(ticks.size(), 1u) << r;
  EXPECT_GE(ticks[0], 8u) << r;
  EXPECT_LE(ticks[0], 12u) << r;
}

// -p keeps one process; a second one doing the same thing is ignored.
// SIGINT then stops tracing cleanly with the output flushed.
TEST_F(E2eTracing, PidKeepsOnlyThatProcessAndSigintFlushes) {
  Process traced(stopped_nop_storm(300));
  Process other(stopped_nop_storm(700));
  Process tracer(mt({"-p", std::to_string(traced.pid()), script("complete.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  traced.resume();
  other.resume();
  ASSERT_EQ(traced.wait(10s).exit_code, 0);
  ASSERT_EQ(other.wait(10s).exit_code, 0);
  tracer.signal(SIGINT);
  auto r = tracer.wait(10s);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "user_data"), sequence(1, 300)) << r;
  EXPECT_TRUE(contains(r.err, "moontrace: 300 events, 0 lost")) << r;
}

// -p PID's children that were running before tracing began are traced
// too: here two NOP storms, each stopped until every probe is attached.
TEST_F(E2eTracing, PidTracesTheChildrenItAlreadyHad) {
  auto stopped = [](const std::string &command) {
    return "sh -c 'kill -STOP $$; exec " + command + "'";
  };
  Process traced(
      Command{{"sh", "-c", stopped(nop_storm(300)) + " & " + stopped(nop_storm(200)) + " & wait"}});
  auto stopped_children = [&] {
    size_t n = 0;
    for (const auto &entry : std::filesystem::directory_iterator("/proc")) {
      std::string stat = read_file(entry.path().string() + "/stat");
      auto fields =
          stat.empty() ? std::vector<std::string>{} : words(stat.substr(stat.rfind(')') + 2));
      n += fields.size() > 1 && fields[0] == "T" && fields[1] == std::to_string(traced.pid());
    }
    return n;
  };
  for (int i = 0; i < 100 && stopped_children() < 2; i++)
    std::this_thread::sleep_for(50ms);
  ASSERT_EQ(stopped_children(), 2u);
  Process tracer(mt({"-p", std::to_string(traced.pid()), script("complete.lua")}));
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.wait(1s);
  kill(-traced.pid(), SIGCONT);
  ASSERT_EQ(traced.wait(30s).exit_code, 0);
  auto r = tracer.wait(30s);  // it stops when its process exits
  ASSERT_EQ(r.exit_code, 0) << r;
  auto expected = sequence(1, 300), second = sequence(1, 200);
  expected.insert(expected.end(), second.begin(), second.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(values_of(r.out, "user_data"), expected) << r;
}

// -p takes a process: a thread's id is refused, as it would match nothing.
TEST_F(E2eTracing, AThreadsIdIsNoPid) {
  mt::testing::WaitingThread thread;
  int id = thread.tid();
  auto r = run(mt({"-p", std::to_string(id), script("complete.lua")}), 10s);
  EXPECT_TRUE(one_line_error(
      r, {"-p " + std::to_string(id) + " is a thread of process " + std::to_string(getpid())}));
}

TEST_F(E2eTracing, MissingPidIsAnError) {
  Process gone(Command{{"true"}});
  ASSERT_EQ(gone.wait().exit_code, 0);
  auto r = run(mt({"-p", std::to_string(gone.pid()), script("complete.lua")}), 3s);
  EXPECT_TRUE(one_line_error(r, {std::to_string(gone.pid())}));
}

TEST_F(E2eTracing, CommandThatCannotRunIsAnError) {
  auto r = run(mt({"-c", "/nonexistent/command", script("complete.lua")}), 5s);
  EXPECT_TRUE(one_line_error(r, {"No such file"}));
}

TEST_F(E2eTracing, SigtermStopsCleanlyAndRunsEnd) {
  Process workload(stopped_nop_storm(200));
  auto r = trace_until_it_exited(
      mt({script("count.lua"), "--target", std::to_string(workload.pid())}), workload, SIGTERM);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "completions"), std::vector<uint64_t>{200}) << r;
}

TEST_F(E2eTracing, OutputFileReceivesTheScriptOutput) {
  TempDir dir;
  auto r = run(mt({"-o", dir.file("out.txt"), "-c", nop_storm(10), script("complete.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(values_of(read_file(dir.file("out.txt")), "user_data"), sequence(1, 10)) << r;
}

TEST_F(E2eTracing, UnwritableOutputFailsBeforeAttaching) {
  TempDir dir;
  auto r = run(
      mt({"-o", "/nonexistent/dir/x", "-c", "touch " + dir.file("ran"), script("complete.lua")}),
      5s);
  EXPECT_TRUE(one_line_error(r, {"/nonexistent/dir/x"}));
  EXPECT_FALSE(contains(r.err, kReady));
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << "the command ran";
}

// Under sudo, -c runs the command as the invoking user.
TEST_F(E2eTracing, CommandRunsAsTheSudoUser) {
  Command c = mt({"-c", "id", script("complete.lua")});
  c.env = {{"SUDO_UID", "65534"}, {"SUDO_GID", "65534"}};
  auto r = run(c);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(values_of(r.out, "uid"), std::vector<uint64_t>{65534}) << r;
  EXPECT_EQ(values_of(r.out, "gid"), std::vector<uint64_t>{65534}) << r;
}

// A run the kernel skips (a BPF program was already running on that CPU:
// here the probe's own, which prints, on the print's tracepoint) is an
// event never seen: the summary counts it, per probe.
TEST_F(E2eTracing, RunsTheKernelSkippedAreCountedPerProbe) {
  // Before 6.2 the kernel ran such a program inside itself, and the print
  // inside the print would wait for its own lock.
  utsname kernel{};
  int major = 0, minor = 0;
  ASSERT_EQ(uname(&kernel), 0);
  ASSERT_EQ(std::sscanf(kernel.release, "%d.%d", &major, &minor), 2) << kernel.release;
  if (major < 6 || (major == 6 && minor < 2))
    GTEST_SKIP() << "kernel " << kernel.release << " does not skip a tp_btf program run in itself";
  auto r = run(mt({"--unsafe", "-c", nop_storm(100), script("skipped_runs.lua")}));
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(
      contains(r.err, "moontrace: 100 events, 0 lost, 100 probe runs skipped by the kernel"))
      << r;
  EXPECT_TRUE(contains(r.err, "moontrace:   skipped 100 runs of tp_btf:bpf_trace_printk\n")) << r;
}

// Records lost while moontrace could not read (stopped, its buffers full)
// are counted; and what the CPUs could not hand over then, kept staged, is
// handed over and read by the stop that comes first when it runs again:
// the records taken and those counted as lost add up to the kernel's own
// count.
TEST_F(E2eTracing, RecordsTakenAndLostAddUpToTheKernelsCountAfterFullBuffers) {
  Process storm(stopped_nop_storm(100000));
  Command c = mt({"-p", std::to_string(storm.pid()), script("counted_completions.lua")});
  c.env.push_back({"MOONTRACE_BUFFER_KB", "64"});
  Process tracer(c);
  ASSERT_TRUE(tracer.wait_for_err(kReady)) << tracer.err();
  tracer.signal(SIGSTOP);
  storm.resume();
  ASSERT_EQ(storm.wait(30s).exit_code, 0);
  tracer.signal(SIGINT);
  tracer.signal(SIGCONT);
  auto r = tracer.wait(30s);
  ASSERT_EQ(r.exit_code, 0) << r;
  auto [events, lost] = event_counts(r);
  ASSERT_GT(lost, 0u) << r;
  auto records = values_of(r.out, "records"), kernel = values_of(r.out, "kernel");
  ASSERT_EQ(records.size(), 1u) << r;
  ASSERT_EQ(kernel, std::vector<uint64_t>{100000}) << r;
  EXPECT_EQ(records[0] + lost, kernel[0]) << r;
  EXPECT_EQ(events, records[0]) << r;
}

// Programs run in interrupts on the CPU where the reader hands a CPU's
// staged records to its ring (there, with interrupts on): the reader and 8
// threads that sleep 50 us at a time, all on one CPU, whose timers fire in
// interrupts whatever that CPU is running. Every record the programs wrote
// reaches the script once, as many as the kernel counted: none is dropped or
// doubled by a hand-over it interrupted. (The kernel may skip a few timers'
// tracepoints: bpftrace misses them too, so the count to match is the
// kernel's.)
TEST_F(E2eTracing, RecordsWrittenInInterruptsOnTheReadersCpuAllArrive) {
  constexpr uint64_t kSleeps = 100000;
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed))
    cpu++;
  std::string on_cpu = std::to_string(cpu);
  Command sleeps{
      {"taskset", "-c", on_cpu, workload("short_sleeps"), std::to_string(kSleeps / 8), "50", "8"},
      {},
      true};
  Process sleeper(sleeps);
  Command tracing = mt({script("timer_interrupts.lua"), "--pid", std::to_string(sleeper.pid())});
  tracing.argv.insert(tracing.argv.begin(), {"taskset", "-c", on_cpu});
  auto r = trace_until_it_exited(tracing, sleeper, SIGINT);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_TRUE(contains(r.err, " 0 lost")) << r;
  auto arms = values_of(r.out, "arms"), fires = values_of(r.out, "fires");
  ASSERT_EQ(arms.size(), 1u) << r;
  ASSERT_EQ(fires.size(), 1u) << r;
  EXPECT_EQ(arms, values_of(r.out, "kernel_arms")) << r;
  EXPECT_EQ(fires, values_of(r.out, "kernel_fires")) << r;
  EXPECT_GE(arms[0], kSleeps) << r;
  EXPECT_GE(fires[0], kSleeps * 99 / 100) << r;
}

}  // namespace
}  // namespace e2e
