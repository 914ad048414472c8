// Forks the -c command, holds it until probes attach, then execs it, under sudo as the user.
#include "run/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/error.h"
#include "run/stop_signals.h"

namespace mt {

std::vector<std::string> split_command(const std::string &command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < command.size(); i++) {
    char c = command[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < command.size())
        word += command[++i];
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word)
        words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote)
    throw Error("unterminated quote in command: " + command);
  if (in_word)
    words.push_back(word);
  return words;
}

namespace {

// Under sudo, the traced program runs as the user who invoked sudo.
void drop_to_invoking_user() {
  const char *uid = std::getenv("SUDO_UID");
  const char *gid = std::getenv("SUDO_GID");
  if (!uid || !gid || getuid() != 0)
    return;
  gid_t g = static_cast<gid_t>(std::atol(gid));
  uid_t u = static_cast<uid_t>(std::atol(uid));
  if (const char *user = std::getenv("SUDO_USER"))
    initgroups(user, g);
  else
    setgroups(0, nullptr);
  if (setgid(g) != 0 || setuid(u) != 0)
    _exit(126);
}

// Whether execvp would find a file named NAME: only that it is there, as
// whether the invoking user may run it shows at the exec.
bool found_on_path(const std::string &name) {
  if (name.find('/') != std::string::npos)
    return access(name.c_str(), F_OK) == 0;
  const char *path = getenv("PATH");
  std::string dirs = path ? path : "/bin:/usr/bin";  // execvp's default
  for (size_t start = 0, end; start <= dirs.size(); start = end + 1) {
    end = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, end - start);
    struct stat st;
    if (stat(((dir.empty() ? "." : dir) + "/" + name).c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
      return true;
  }
  return false;
}

}  // namespace

ChildProcess::ChildProcess(const std::string &command, bool stdout_to_stderr) {
  std::vector<std::string> words = split_command(command);
  if (words.empty())
    throw Error("-c needs a command to run");
  // A command that is not there fails now, before any output is opened
  // (an earlier trace of the same name stays as it was), not at its exec.
  if (!found_on_path(words[0]))
    throw Error("cannot run the -c command: " + words[0] + ": " + std::strerror(ENOENT));
  int go[2], error[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(error, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  pid_t moontrace = getpid();
  pid_ = fork();
  if (pid_ < 0)
    throw Error(std::string("cannot fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    close(go[1]);
    close(error[0]);
    // It starts as a shell would start it: what moontrace changed for
    // itself (SIGPIPE ignored, stop handlers) is not the command's business.
    restore_inherited_signals();
    // Made ready before the probes attach, so that the trace sees only the
    // command's exec: the user, the output.
    if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
      _exit(127);
    drop_to_invoking_user();
    // However moontrace ends (killed, or leaving at once from a stuck
    // script), the command does not outlive it. Set after the change of
    // user, which clears it; moontrace checked for, in case it died first.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != moontrace)
      _exit(127);
    char byte;
    if (read(go[0], &byte, 1) != 1)
      _exit(127);  // moontrace stopped before tracing began
    std::vector<char *> argv;
    for (auto &w : words)
      argv.push_back(w.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    int err = errno;
    (void)!write(error[1], &err, sizeof(err));
    _exit(127);
  }
  close(go[0]);
  close(error[1]);
  go_fd_ = go[1];
  error_fd_ = error[0];
}

ChildProcess::~ChildProcess() {
  if (go_fd_ >= 0)
    close(go_fd_);  // a child never started exits at once
  if (error_fd_ >= 0)
    close(error_fd_);
  end();
}

void ChildProcess::start() {
  char byte = 1;
  (void)!write(go_fd_, &byte, 1);
  close(go_fd_);
  go_fd_ = -1;
  int err = 0;
  ssize_t n = read(error_fd_, &err, sizeof(err));  // EOF: exec succeeded
  close(error_fd_);
  error_fd_ = -1;
  if (n == sizeof(err))
    throw Error(std::string("cannot run the -c command: ") + std::strerror(err));
}

bool ChildProcess::exited() {
  if (reaped_)
    return true;
  int status;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    wait_status_ = status;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return reaped_;
}

std::string ChildProcess::failure() const {
  if (!reaped_ || status_ == 0)
    return "";
  if (WIFSIGNALED(wait_status_)) {
    int sig = WTERMSIG(wait_status_);
    return "the command was killed by signal " + std::to_string(sig) + " (" +
           signal_description(sig) + ")";
  }
  return "the command exited with status " + std::to_string(status_);
}

void ChildProcess::terminate() {
  if (!reaped_ && pid_ > 0)
    kill(pid_, SIGTERM);
}

void ChildProcess::end() {
  if (reaped_ || pid_ <= 0)
    return;
  terminate();
  // A command that ignores SIGTERM would outlive moontrace, holding its
  // output open: after a grace period, or at once on another stop signal,
  // it is killed.
  int signals = stop_signal_count();
  auto deadline = std::chrono::steady_clock::now() + kTerminateGrace;
  while (!exited() && std::chrono::steady_clock::now() < deadline && stop_signal_count() == signals)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (reaped_)
    return;
  kill(pid_, SIGKILL);
  // Reaped when it is gone; not waited for past a second (a process stuck
  // in the kernel dies when it leaves it).
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!exited() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace mt
