// Helpers for end-to-end tests: run the real moontrace binary and workloads
// as subprocesses, read their output, and decide whether BPF can be used.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace e2e {

using namespace std::chrono_literals;

// Paths of the binary under test, a workload in build/tests, and a Lua
// script in tests/e2e/scripts.
std::string moontrace();
std::string workload(const std::string &name);
std::string script(const std::string &name);

struct Command {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env = {};  // set for the child
  bool start_stopped = false;  // SIGSTOP before exec; Process::resume() runs it
  std::string cwd = {};        // where it runs; empty: the test's own directory
};

// moontrace ARGS..., and the same command run as user nobody (no caps).
Command mt(std::vector<std::string> args);
Command as_nobody(Command c);

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out, err;

  std::vector<std::string> err_lines() const;  // without the ready and event-count lines (and the
                                               // lost records per probe that follow it)
};
std::ostream &operator<<(std::ostream &os, const Result &r);

// A child process in its own process group; stdout and stderr go to
// anonymous files. The destructor kills the group if it is still running.
class Process {
 public:
  explicit Process(const Command &c);
  ~Process();
  Process(const Process &) = delete;
  Process &operator=(const Process &) = delete;

  pid_t pid() const { return pid_; }
  void resume();
  void signal(int sig);
  std::string err() const;
  // Polls stderr for `needle` until it appears, the process exits, or timeout.
  bool wait_for_err(const std::string &needle, std::chrono::milliseconds timeout = 20s);
  // Waits for exit; kills the group and sets timed_out after `timeout`.
  Result wait(std::chrono::milliseconds timeout = 30s);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool reaped_ = false;
};

Result run(const Command &c, std::chrono::milliseconds timeout = 30s);

// nop_storm N, stopped before exec: its pid is known before it submits.
Command stopped_nop_storm(int n);

// moontrace ends its stderr line with this once every probe is attached.
inline constexpr const char *kReady = "; Ctrl-C to stop";

// A private directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path &path() const { return path_; }
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  std::string write(const std::string &name, const std::string &text) const;

 private:
  std::filesystem::path path_;
};

// Every VALUE of `KEY=VALUE` words in `text`, sorted.
std::vector<uint64_t> values_of(const std::string &text, const std::string &key);
// first, first+step, ... up to last.
std::vector<uint64_t> sequence(uint64_t first, uint64_t last, uint64_t step = 1);
std::vector<std::string> lines(const std::string &text);
std::vector<std::string> words(const std::string &line);  // split at whitespace
bool contains(const std::string &text, const std::string &needle);
// N and M of the summary line "moontrace: N events, M lost" in stderr.
struct EventCounts {
  uint64_t events = 0, lost = 0;
};
EventCounts event_counts(const Result &r);

// The compiler library beside the moontrace under test.
std::string compiler_library();
// Runs moontrace ARGS, with MOONTRACE_CACHE set to `cache`, where the
// libraries of LLVM and Clang (those the compiler library needs) are empty
// files, in a mount namespace of its own.
Result without_llvm(const std::vector<std::string> &args, const std::string &cache);

// Exit code 1 and exactly one stderr line "moontrace: ..." holding every needle.
::testing::AssertionResult one_line_error(const Result &r, const std::vector<std::string> &needles);
std::string read_file(const std::string &path);

// Nothing when `why` is empty; else the test fails when CI=true (CI must
// run it) and is skipped otherwise, saying `what` and why. Call it from
// SetUp() (GTEST_SKIP and FAIL return from the calling function only).
void skip_unless_ci(const std::optional<std::string> &why, const std::string &what);

// Tests that load BPF programs. Without root or BPF they are skipped, but
// they fail when CI=true: CI must really run them.
class BpfTest : public ::testing::Test {
 protected:
  void SetUp() override;
};

}  // namespace e2e
