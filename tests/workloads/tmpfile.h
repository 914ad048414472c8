/* An unnamed temporary file for the workloads: O_TMPFILE in $TMPDIR (or
 * /tmp), else a named one unlinked at once. Returns the fd, or -1. */
#ifndef MT_WORKLOAD_TMPFILE_H
#define MT_WORKLOAD_TMPFILE_H
/* Needs _GNU_SOURCE (O_TMPFILE), defined before the first include. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline int open_tmpfile(const char *prefix) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir)
    dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0)
    return fd;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-XXXXXX", dir, prefix);
  fd = mkstemp(path);
  if (fd >= 0)
    unlink(path);
  return fd;
}
#endif
