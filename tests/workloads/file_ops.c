/* A known number of file operations, for tests of the syscall, vfs, ext4
 * and block layers (iostack, vfsstat, ext4slower).
 *
 * usage: file_ops [-s] [-o OPENS] [-r READS] [-w WRITES] [-f FSYNCS]
 *                 [-c CREATES] [-b BYTES] [-D DEV -n DIRECT_READS] DIR
 *
 * With -s it stops itself (SIGSTOP) once loaded, before any of the
 * operations below, so that a tracer can attach to its pid (-p) and send
 * SIGCONT: nothing it did to start (the dynamic loader's opens and reads)
 * is traced. Then, one after the other, from one thread:
 *  - OPENS (default 1, at least 1) opens of DIR/data: the first creates it
 *    (O_CREAT | O_TRUNC, read-write) and stays open, the others are opened
 *    read-only and closed;
 *  - WRITES pwrite(2) calls of BYTES (default 4096) to it, at 0, BYTES, ...;
 *  - FSYNCS fsync(2) calls on it;
 *  - READS pread(2) calls of BYTES from it, at 0, BYTES, ... wrapping
 *    within what was written (at 0 if nothing was);
 *  - CREATES mknod(2) calls making the regular files DIR/new.1, new.2, ...;
 *  - with -D: one open of block device DEV (O_RDONLY | O_DIRECT) and
 *    DIRECT_READS pread(2) calls of 4096 bytes at 0, 4096, ... from it: as
 *    many read requests on DEV.
 * Every call must succeed in full, else it says which on stderr and exits
 * 1. glibc makes open(2) an openat(2) and pread(2) a pread64(2) system
 * call; mknod(2) a mknodat(2). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void fail(const char *what, const char *path) {
  fprintf(stderr, "file_ops: %s %s: %s\n", what, path, strerror(errno));
  exit(1);
}

static unsigned long number(const char *text) {
  char *end;
  errno = 0;
  unsigned long n = strtoul(text, &end, 0);
  if (errno || end == text || *end || text[0] == '-') {
    fprintf(stderr, "file_ops: '%s' is not a count\n", text);
    exit(2);
  }
  return n;
}

int main(int argc, char **argv) {
  unsigned long opens = 1, reads = 0, writes = 0, fsyncs = 0, creates = 0, bytes = 4096;
  unsigned long direct_reads = 0;
  const char *dev = NULL;
  int stop = 0, c;
  while ((c = getopt(argc, argv, "so:r:w:f:c:b:D:n:")) != -1) {
    switch (c) {
      case 's': stop = 1; break;
      case 'o': opens = number(optarg); break;
      case 'r': reads = number(optarg); break;
      case 'w': writes = number(optarg); break;
      case 'f': fsyncs = number(optarg); break;
      case 'c': creates = number(optarg); break;
      case 'b': bytes = number(optarg); break;
      case 'D': dev = optarg; break;
      case 'n': direct_reads = number(optarg); break;
      default: goto usage;
    }
  }
  if (optind + 1 != argc || opens < 1 || bytes < 1 || bytes > (1ul << 20) ||
      (direct_reads && !dev))
    goto usage;
  const char *dir = argv[optind];
  char data[4096], path[4096];
  snprintf(data, sizeof data, "%s/data", dir);
  char *buf = NULL;
  if (posix_memalign((void **)&buf, 4096, bytes < 4096 ? 4096 : bytes) != 0)
    fail("allocate", "buffer");
  memset(buf, 'x', bytes);
  if (stop)
    raise(SIGSTOP);

  int fd = open(data, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    fail("open", data);
  for (unsigned long i = 1; i < opens; i++) {
    int other = open(data, O_RDONLY | O_CLOEXEC);
    if (other < 0)
      fail("open", data);
    close(other);
  }
  for (unsigned long i = 0; i < writes; i++)
    if (pwrite(fd, buf, bytes, (off_t)(i * bytes)) != (ssize_t)bytes)
      fail("write", data);
  for (unsigned long i = 0; i < fsyncs; i++)
    if (fsync(fd) != 0)
      fail("fsync", data);
  for (unsigned long i = 0; i < reads; i++) {
    off_t at = writes ? (off_t)(i % writes * bytes) : 0;
    if (pread(fd, buf, bytes, at) != (writes ? (ssize_t)bytes : 0))
      fail("read", data);
  }
  for (unsigned long i = 1; i <= creates; i++) {
    snprintf(path, sizeof path, "%s/new.%lu", dir, i);
    if (mknod(path, S_IFREG | 0600, 0) != 0)
      fail("mknod", path);
  }
  if (dev) {
    int d = open(dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (d < 0)
      fail("open", dev);
    for (unsigned long i = 0; i < direct_reads; i++)
      if (pread(d, buf, 4096, (off_t)(i * 4096)) != 4096)
        fail("read", dev);
  }
  return 0;

usage:
  fprintf(stderr,
          "usage: file_ops [-s] [-o OPENS] [-r READS] [-w WRITES] [-f FSYNCS] [-c CREATES]\n"
          "                [-b BYTES] [-D DEV -n DIRECT_READS] DIR\n");
  return 2;
}
