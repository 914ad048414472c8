// The process tree as /proc shows it: what -p finds already running under
// its target, and whether a pid names a process or one of its threads.
#pragma once
#include <string>
#include <vector>

namespace mt {

// The process (thread group) whose thread PID is; -1 if there is none.
int thread_group_of(int pid, const std::string &proc = "/proc");

// PID and the processes below it now: its children, theirs, and so on.
std::vector<int> process_subtree(int pid, const std::string &proc = "/proc");

}  // namespace mt
