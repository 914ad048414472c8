// Leaves the detaching of probes to a child process, so that a stop is
// not held back by it.
#pragma once
#include <sys/types.h>

namespace mt {

// Detaching a tracepoint waits out an RCU grace period (25-85 ms here), so
// closing many costs seconds that the user would wait for after the work
// is done. A child keeps the links (its copies of our descriptors) until
// this process is gone, and the kernel tears them down when the child
// exits.
void hand_bpf_teardown_to_a_child();
// Flushes stdio and exits with `code`, leaving the teardown behind.
[[noreturn]] void exit_leaving_teardown_behind(int code);

// Returns once the process PIDFD (pidfd_open) refers to has no thread
// left, so none of its descriptors is open: a thread may outlive the main
// one, which is when the kernel gives the process's children another
// parent. Without a pidfd (before Linux 5.3, or none to be had) or when
// it cannot be polled, once the caller's parent is no longer PID.
void wait_until_gone(pid_t pid, int pidfd);

}  // namespace mt
