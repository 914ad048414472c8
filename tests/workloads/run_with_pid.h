/* Runs a command in a new child given a chosen pid, for the workloads that
 * test -p/-c's children on reused pids (pid_reuse, pid_to_stranger). */
#ifndef MT_WORKLOAD_RUN_WITH_PID_H
#define MT_WORKLOAD_RUN_WITH_PID_H
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The pid of a child that exited at once and was reaped, free again; -1
 * (errno set) on failure. */
static inline pid_t reaped_child(void) {
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  return child < 0 || waitpid(child, NULL, 0) != child ? -1 : child;
}

/* Forks a child that gets pid WANTED (through /proc/sys/kernel/ns_last_pid,
 * as root) and runs ARGV. Its exit status; -1 when another process took
 * the pid first (try again); 1, saying why on stderr as WHO, on failure. */
static inline int run_with_pid(pid_t wanted, char **argv, const char *who) {
  enum { kTaken = 120 };
  FILE *last = fopen("/proc/sys/kernel/ns_last_pid", "w");
  if (!last || fprintf(last, "%d", wanted - 1) < 0 || fclose(last) != 0) {
    fprintf(stderr, "%s: /proc/sys/kernel/ns_last_pid: %s\n", who, strerror(errno));
    return 1;
  }
  pid_t child = fork();
  if (child == 0) {
    if (getpid() != wanted)
      _exit(kTaken);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status;
  if (child < 0 || waitpid(child, &status, 0) != child) {
    fprintf(stderr, "%s: %s: %s\n", who, child < 0 ? "fork" : "waitpid", strerror(errno));
    return 1;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kTaken)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
#endif
