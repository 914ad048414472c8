// The -c command: forked before the probes load so its pid can seed the
// target filter, held until every probe is attached, then exec'd as the
// invoking user when moontrace runs under sudo.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace mt {

// Splits a command line into words: whitespace separates, quotes group.
std::vector<std::string> split_command(const std::string &command);

class ChildProcess {
 public:
  // Forks; the child waits. Throws mt::Error on a malformed command.
  explicit ChildProcess(const std::string &command);
  ~ChildProcess();
  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;

  pid_t pid() const { return pid_; }
  // Lets the child exec; throws mt::Error if exec fails.
  void start();
  // True once the child has exited (reaps it); exit_status() then holds.
  bool exited();
  int exit_status() const { return status_; }
  // Ends a child that is still running (SIGTERM).
  void terminate();

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;     // parent writes here to release the child
  int error_fd_ = -1;  // child writes errno here if exec fails
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace mt
