// The running process that -p traces, watched so that tracing stops when
// it exits.
#pragma once

namespace mt {

class TargetProcess {
 public:
  explicit TargetProcess(int pid);
  ~TargetProcess();
  TargetProcess(const TargetProcess &) = delete;
  TargetProcess &operator=(const TargetProcess &) = delete;

  int pid() const { return pid_; }
  bool exited() const;

 private:
  int pid_;
  int pidfd_;  // readable once it exits; -1 when it was gone, or without pidfd_open (before 5.3)
};

}  // namespace mt
