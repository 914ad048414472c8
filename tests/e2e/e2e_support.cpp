// Runs moontrace and the workloads as subprocesses for the end-to-end tests.
#include "tests/e2e/e2e_support.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

extern char **environ;

namespace e2e {

namespace {

std::string read_fd(int fd) {
  std::string text;
  char buf[65536];
  ssize_t n;
  for (off_t at = 0; (n = pread(fd, buf, sizeof buf, at)) > 0; at += n)
    text.append(buf, n);
  return text;
}

// Why BPF programs cannot be loaded here, or nothing when they can.
std::optional<std::string> bpf_unavailable() {
  if (geteuid() != 0)
    return "not running as root";
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  int fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  if (fd < 0)
    return std::string("bpf(BPF_MAP_CREATE) failed: ") + std::strerror(errno);
  close(fd);
  if (access("/sys/kernel/tracing/events/io_uring/io_uring_complete", F_OK) != 0)
    return "no io_uring tracepoints in /sys/kernel/tracing";
  return std::nullopt;
}

bool in_ci() {
  const char *ci = std::getenv("CI");
  return ci && (std::strcmp(ci, "true") == 0 || std::strcmp(ci, "1") == 0);
}

}  // namespace

std::string moontrace() {
  return MT_BINARY;
}
std::string workload(const std::string &name) {
  return std::string(MT_TESTS_DIR) + "/" + name;
}
std::string script(const std::string &name) {
  return std::string(MT_SOURCE_DIR) + "/tests/e2e/scripts/" + name;
}

Command mt(std::vector<std::string> args) {
  args.insert(args.begin(), moontrace());
  Command c;
  c.argv = std::move(args);
  return c;
}

namespace {

// A copy that user nobody can read and run: a fresh clone may sit in a
// private directory (mktemp -d makes it 0700).
std::string readable_copy(const std::filesystem::path &file) {
  namespace fs = std::filesystem;
  // Removed at exit with everything copied into it (a copy of moontrace
  // is 8 MB). An atexit() handler registered while `dir` was being made ran
  // after `dir` was destroyed, and left the directory behind.
  static const TempDir dir;  // world-readable and searchable
  fs::path copy = dir.path() / file.filename();
  fs::copy_file(file, copy, fs::copy_options::overwrite_existing);
  fs::permissions(copy, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  return copy;
}

}  // namespace

Command as_nobody(Command c) {
  for (auto &arg : c.argv)
    if (std::filesystem::is_regular_file(arg))
      arg = readable_copy(arg);
  c.argv.insert(c.argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  return c;
}

std::vector<std::string> Result::err_lines() const {
  std::vector<std::string> kept;
  for (auto &l : lines(err))
    if (!(l.rfind("moontrace: ", 0) == 0 && (contains(l, kReady) || contains(l, " events, "))) &&
        l.rfind("moontrace:   lost ", 0) != 0)
      kept.push_back(l);
  return kept;
}

std::ostream &operator<<(std::ostream &os, const Result &r) {
  os << "exit " << r.exit_code;
  if (r.signal)
    os << " (signal " << r.signal << ")";
  if (r.timed_out)
    os << " (timed out)";
  std::string out = r.out.size() > 2000 ? r.out.substr(0, 2000) + "...\n" : r.out;
  return os << "\n--- stdout:\n" << out << "--- stderr:\n" << r.err;
}

Process::Process(const Command &c) {
  std::vector<char *> argv;
  for (auto &a : c.argv)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  // Our environment, a compiled-object cache of our own (each run compiles
  // every script once, cold, then reuses it, warm), and the command's own.
  static const TempDir cache;
  std::map<std::string, std::string> env;
  for (char **e = environ; *e; e++) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    env[entry.substr(0, eq)] = eq == std::string::npos ? "" : entry.substr(eq + 1);
  }
  env["MOONTRACE_CACHE"] = cache.file("cache");
  for (auto &[k, v] : c.env)
    env[k] = v;
  std::vector<std::string> env_text;
  for (auto &[k, v] : env)
    env_text.push_back(k + "=" + v);
  std::vector<char *> envp;
  for (auto &e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  out_fd_ = memfd_create("stdout", MFD_CLOEXEC);
  err_fd_ = memfd_create("stderr", MFD_CLOEXEC);
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    dup2(null, 0);
    dup2(out_fd_, 1);
    dup2(err_fd_, 2);
    if (!c.cwd.empty() && chdir(c.cwd.c_str()) != 0) {
      dprintf(2, "chdir %s: %s\n", c.cwd.c_str(), std::strerror(errno));
      _exit(127);
    }
    if (c.start_stopped)
      raise(SIGSTOP);
    execvpe(argv[0], argv.data(), envp.data());
    dprintf(2, "exec %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  if (c.start_stopped) {
    int status;
    waitpid(pid_, &status, WUNTRACED);
  }
}

Process::~Process() {
  if (!reaped_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  close(out_fd_);
  close(err_fd_);
}

void Process::resume() {
  kill(pid_, SIGCONT);
}
void Process::signal(int sig) {
  kill(pid_, sig);
}
std::string Process::err() const {
  return read_fd(err_fd_);
}

bool Process::wait_for_err(const std::string &needle, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (err().find(needle) != std::string::npos)
      return true;
    siginfo_t info{};
    if (reaped_ ||
        (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_))
      return err().find(needle) != std::string::npos;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

Result Process::wait(std::chrono::milliseconds timeout) {
  Result r;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (!reaped_) {
    pid_t got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      reaped_ = true;
    } else if (std::chrono::steady_clock::now() >= deadline) {
      r.timed_out = true;
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
    } else {
      std::this_thread::sleep_for(5ms);
    }
  }
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.signal = WTERMSIG(status);
  r.out = read_fd(out_fd_);
  r.err = read_fd(err_fd_);
  return r;
}

Result run(const Command &c, std::chrono::milliseconds timeout) {
  return Process(c).wait(timeout);
}

Command stopped_nop_storm(int n) {
  return {{workload("nop_storm"), std::to_string(n), "16"}, {}, true};
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "moontrace-e2e-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
  path_ = pattern;
  std::filesystem::permissions(
      path_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                 std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                 std::filesystem::perms::others_exec);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string &name, const std::string &text) const {
  std::string p = file(name);
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p) << text;
  // Whatever the umask: moontrace refuses scripts others could change.
  std::filesystem::permissions(
      p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
             std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  return p;
}

std::vector<uint64_t> values_of(const std::string &text, const std::string &key) {
  std::vector<uint64_t> values;
  std::istringstream words(text);
  std::string word;
  while (words >> word)
    if (word.rfind(key + "=", 0) == 0)
      values.push_back(std::strtoull(word.c_str() + key.size() + 1, nullptr, 10));
  std::sort(values.begin(), values.end());
  return values;
}

std::vector<uint64_t> sequence(uint64_t first, uint64_t last, uint64_t step) {
  std::vector<uint64_t> v;
  for (uint64_t i = first; i <= last; i += step)
    v.push_back(i);
  return v;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

std::vector<std::string> words(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

bool contains(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

EventCounts event_counts(const Result &r) {
  unsigned long long events = 0, lost = 0;
  for (const auto &line : lines(r.err))
    std::sscanf(line.c_str(), "moontrace: %llu events, %llu lost", &events, &lost);
  return {events, lost};
}

::testing::AssertionResult one_line_error(const Result &r,
                                          const std::vector<std::string> &needles) {
  auto failure = [&](const std::string &why) {
    return ::testing::AssertionFailure() << why << "; got " << r;
  };
  if (r.exit_code != 1)
    return failure("expected exit code 1");
  auto errors = r.err_lines();
  if (errors.size() != 1 || errors[0].rfind("moontrace: ", 0) != 0)
    return failure("expected one line 'moontrace: ...' on stderr");
  for (const auto &n : needles)
    if (!contains(errors[0], n))
      return failure("expected the error to contain '" + n + "'");
  return ::testing::AssertionSuccess();
}

std::string read_file(const std::string &path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void skip_unless_ci(const std::optional<std::string> &why, const std::string &what) {
  if (!why)
    return;
  if (in_ci())
    FAIL() << what << " (" << *why << ") and CI=true: these tests must run in CI";
  GTEST_SKIP() << what << ": " << *why;
}

void BpfTest::SetUp() {
  static const std::optional<std::string> why = bpf_unavailable();
  skip_unless_ci(why, "BPF is not usable");
}

std::string compiler_library() {
  return (std::filesystem::path(moontrace()).parent_path() / "libmoontrace-compiler.so").string();
}

Result without_llvm(const std::vector<std::string> &args, const std::string &cache) {
  std::string hide =
      "for f in $(ldd \"$1\" | awk '/LLVM|clang/ { print $3 }'); do "
      "mount --bind /dev/null \"$(readlink -f \"$f\")\" || exit 90; done; shift; exec \"$@\"";
  Command c;
  c.argv = {"unshare", "-m", "sh", "-c", hide, "sh", compiler_library(), moontrace()};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.env.push_back({"MOONTRACE_CACHE", cache});
  return run(c, 120s);
}

}  // namespace e2e
