// The -c command: forked as the run begins so its pid can seed the target
// filter, held until every probe is attached, then exec'd as the invoking
// user when moontrace runs under sudo; ended with the run.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace mt {

// Splits a command line into words: whitespace separates, quotes group.
std::vector<std::string> split_command(const std::string &command);

class ChildProcess {
 public:
  // Forks; the child waits, with default signal dispositions and no
  // signal blocked. With `stdout_to_stderr` its output goes to stderr (so
  // that it never mixes into -f json on stdout). Throws mt::Error on a
  // malformed command.
  explicit ChildProcess(const std::string &command, bool stdout_to_stderr = false);
  ~ChildProcess();  // end()s it

  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;

  pid_t pid() const { return pid_; }
  // Lets the child exec; throws mt::Error if exec fails.
  void start();
  // True once the child has exited (reaps it); exit_status() then holds:
  // its status, or 128 + the signal that killed it, as shells say it.
  bool exited();
  int exit_status() const { return status_; }
  // How it ended, "" when it exited with status 0: "the command exited
  // with status 3", "the command was killed by signal 11 (Segmentation
  // fault)".
  std::string failure() const;
  // Asks a child that is still running to end (SIGTERM).
  void terminate();
  // Ends a child that is still running and reaps it: SIGTERM, then SIGKILL
  // if it is still there after kTerminateGrace or another stop signal (a
  // command that ignores SIGTERM would outlive moontrace, holding its
  // output open). Only the command's own process: what it started itself
  // is its business (a terminal's Ctrl-C reaches them all).
  void end();
  static constexpr std::chrono::milliseconds kTerminateGrace{500};

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;     // parent writes here to release the child
  int error_fd_ = -1;  // child writes errno here if exec fails
  bool reaped_ = false;
  int status_ = 0;
  int wait_status_ = 0;  // as waitpid gave it
};

}  // namespace mt
