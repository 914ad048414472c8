/* Gives a process outside the traced one's family the pid of the traced
 * one's child, just reaped, for tests of -p's children.
 *
 * usage: pid_to_stranger COMMAND [ARG...]
 *
 * Prints the pid of its child, the one to trace with -p, which stops itself
 * until continued (SIGCONT). That child forks a grandchild that exits at
 * once, reaps it and hands its pid over a pipe to this process, which at
 * once (through /proc/sys/kernel/ns_last_pid, as root) forks a process of
 * its own with that pid, running COMMAND: a stranger to the traced child,
 * started before the kernel frees the grandchild's task (an RCU grace
 * period after its reap, milliseconds). Exits with COMMAND's status; 3
 * when no process could be given the pid in 20 tries, 1 on other failures,
 * 2 on bad arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_with_pid.h"

enum { kTries = 20 };

static int fail(const char *what) {
  fprintf(stderr, "pid_to_stranger: %s: %s\n", what, strerror(errno));
  return 1;
}

/* The traced child: reaps grandchildren and hands their pids over until
 * told one was taken ('y') or the tries are spent. */
static int traced(int to_stranger, int from_stranger) {
  raise(SIGSTOP);
  for (int attempt = 0; attempt < kTries; attempt++) {
    pid_t gone = reaped_child();
    if (gone < 0)
      return fail("fork");
    char taken = 0;
    if (write(to_stranger, &gone, sizeof gone) != sizeof gone ||
        read(from_stranger, &taken, 1) != 1)
      return fail("pipe");
    if (taken == 'y')
      return 0;
  }
  return 3;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pid_to_stranger COMMAND [ARG...]\n");
    return 2;
  }
  int to_stranger[2], from_stranger[2];
  if (pipe(to_stranger) != 0 || pipe(from_stranger) != 0)
    return fail("pipe");
  pid_t child = fork();
  if (child < 0)
    return fail("fork");
  if (child == 0) {
    close(to_stranger[0]);
    close(from_stranger[1]);
    _exit(traced(to_stranger[1], from_stranger[0]));
  }
  close(to_stranger[1]);  // so that the read below ends when the child does
  close(from_stranger[0]);
  printf("%d\n", child);
  fflush(stdout);
  int result = 3;
  pid_t gone;
  while (read(to_stranger[0], &gone, sizeof gone) == sizeof gone) {
    result = run_with_pid(gone, argv + 1, "pid_to_stranger");
    char taken = result == -1 ? 'n' : 'y';
    if (write(from_stranger[1], &taken, 1) != 1)
      return fail("pipe");
    if (taken == 'y')
      break;
  }
  int status;
  if (waitpid(child, &status, 0) != child)
    return fail("waitpid");
  if (result == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == 3) {
    fprintf(stderr, "pid_to_stranger: no process was given the pid of the one reaped\n");
    return 3;
  }
  return result;
}
