/* Buffered reads that come back short at the end of a file whose pages
 * are all in the page cache, for the test of uring.lua's paths: none
 * waits for a page, so none is retried, though the kernel arms a page
 * wait to read on after the short read (and finds the end of the file).
 *
 * usage: uring_short_reads N
 *
 * Writes 1000 bytes to a temporary file, then submits N READV requests of
 * 4096 bytes at its start, one at a time, each waited for. Exits 0 when
 * each read 1000 bytes, 1 (saying why on stderr) otherwise, 2 on bad
 * arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "tmpfile.h"

enum { kFileBytes = 1000, kReadBytes = 4096 };

static int fail(const char *what, int err) {
  fprintf(stderr, "uring_short_reads: %s: %s\n", what, strerror(err < 0 ? -err : err));
  return 1;
}

int main(int argc, char **argv) {
  int n = argc == 2 ? atoi(argv[1]) : 0;
  if (n <= 0) {
    fprintf(stderr, "usage: uring_short_reads N\n");
    return 2;
  }
  static char text[kFileBytes], buffer[kReadBytes];
  memset(text, 'x', sizeof text);
  int fd = open_tmpfile("uring_short_reads");
  if (fd < 0 || write(fd, text, sizeof text) != (ssize_t)sizeof text)
    return fail("temporary file", errno);
  struct io_uring ring;
  int err = io_uring_queue_init(8, &ring, 0);
  if (err < 0)
    return fail("io_uring_queue_init", err);
  struct iovec iov = {buffer, sizeof buffer};
  for (int i = 0; i < n; i++) {
    io_uring_prep_readv(io_uring_get_sqe(&ring), fd, &iov, 1, 0);
    struct io_uring_cqe *cqe;
    if ((err = io_uring_submit_and_wait(&ring, 1)) < 0 || (err = io_uring_wait_cqe(&ring, &cqe)))
      return fail("io_uring_submit_and_wait", err);
    if (cqe->res != kFileBytes) {
      fprintf(stderr, "uring_short_reads: read %d bytes, not %d\n", cqe->res, kFileBytes);
      return 1;
    }
    io_uring_cqe_seen(&ring, cqe);
  }
  io_uring_queue_exit(&ring);
  return 0;
}
