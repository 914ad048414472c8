/* Gives a new child the pid of one just reaped, for tests of -c/-p's
 * children.
 *
 * usage: pid_reuse COMMAND [ARG...]
 *
 * Forks a child that exits at once, reaps it, and at once (through
 * /proc/sys/kernel/ns_last_pid, as root) forks another with the same pid,
 * which runs COMMAND. Exits with COMMAND's status; 3 (saying why on
 * stderr) when no child could be given the pid in 20 tries, 1 on other
 * failures, 2 on bad arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_with_pid.h"

static int fail(const char *what) {
  fprintf(stderr, "pid_reuse: %s: %s\n", what, strerror(errno));
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pid_reuse COMMAND [ARG...]\n");
    return 2;
  }
  for (int attempt = 0; attempt < 20; attempt++) {
    pid_t first = reaped_child();
    if (first < 0)
      return fail("fork");
    int status = run_with_pid(first, argv + 1, "pid_reuse");
    if (status != -1)  // -1: another process took the pid first
      return status;
  }
  fprintf(stderr, "pid_reuse: no child was given the pid of the one before\n");
  return 3;
}
