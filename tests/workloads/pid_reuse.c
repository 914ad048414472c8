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
    pid_t first = fork();
    if (first < 0)
      return fail("fork");
    if (first == 0)
      _exit(0);
    if (waitpid(first, NULL, 0) != first)
      return fail("waitpid");
    FILE *last = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if (!last || fprintf(last, "%d", first - 1) < 0 || fclose(last) != 0)
      return fail("/proc/sys/kernel/ns_last_pid");
    pid_t second = fork();
    if (second < 0)
      return fail("fork");
    if (second == 0) {
      if (getpid() != first)
        _exit(120);  // another process took the pid first: try again
      execvp(argv[1], argv + 1);
      _exit(127);
    }
    int status;
    if (waitpid(second, &status, 0) != second)
      return fail("waitpid");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 120)
      continue;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  fprintf(stderr, "pid_reuse: no child was given the pid of the one before\n");
  return 3;
}
