/* Submits io_uring NOPs in batches of given sizes, one io_uring_enter per
 * batch, for tests of per-syscall aggregations (e.g. a histogram of
 * to_submit).
 *
 * usage: uring_batches SIZE...     (each SIZE in 1..256)
 *
 * Guarantee: one io_uring (depth 256, no setup flags: no SQPOLL, no IOPOLL,
 * no registered ring fd) and, for each SIZE argument in order, exactly one
 * io_uring_enter(2) call with to_submit == SIZE, min_complete == SIZE and
 * IORING_ENTER_GETEVENTS in flags, which submits SIZE IORING_OP_NOP
 * requests; user_data is the sequence number 1..sum(SIZE) over the whole
 * run. The process makes no other io_uring_enter call: liburing's
 * io_uring_submit_and_wait (checked in 2.3, the version here, and
 * in current master) issues a single
 * enter when wait_nr > 0, NOPs complete inline during submission so all
 * SIZE completions are posted when it returns, and reaping uses
 * io_uring_for_each_cqe, which only reads the shared CQ ring. If the enter
 * submits fewer than SIZE, or fewer than SIZE completions are there
 * afterwards, it says so on stderr and exits 1 rather than enter again.
 * Arguments are all checked before the ring exists, so a bad argument
 * means no enter call at all (exit 2). */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kDepth = 256 };

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: uring_batches SIZE... (each 1..%d)\n", kDepth);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    char *end;
    errno = 0;
    long size = strtol(argv[i], &end, 0);
    if (errno || end == argv[i] || *end || size < 1 || size > kDepth) {
      fprintf(stderr, "uring_batches: bad SIZE '%s' (want 1..%d)\n", argv[i], kDepth);
      return 2;
    }
  }

  struct io_uring ring;
  int err = io_uring_queue_init(kDepth, &ring, 0);
  if (err < 0) {
    fprintf(stderr, "uring_batches: io_uring_queue_init: %s\n", strerror(-err));
    return 1;
  }

  unsigned long long seq = 0;
  for (int i = 1; i < argc; i++) {
    unsigned size = (unsigned)strtol(argv[i], NULL, 0);
    for (unsigned j = 0; j < size; j++) {
      /* The SQ is empty here: everything before was submitted. */
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      io_uring_prep_nop(sqe);
      sqe->user_data = ++seq;
    }
    int ret = io_uring_submit_and_wait(&ring, size);
    if (ret < 0) {
      fprintf(stderr, "uring_batches: submit of %u: %s\n", size, strerror(-ret));
      return 1;
    }
    if ((unsigned)ret != size) {
      fprintf(stderr, "uring_batches: submitted %d of %u\n", ret, size);
      return 1;
    }
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      if (cqe->res < 0) {
        fprintf(stderr, "uring_batches: nop user_data=%llu failed: %s\n",
                (unsigned long long)cqe->user_data, strerror(-cqe->res));
        return 1;
      }
      seen++;
    }
    io_uring_cq_advance(&ring, seen);
    if (seen != size) {
      fprintf(stderr, "uring_batches: %u of %u completions after one enter\n", seen, size);
      return 1;
    }
  }

  io_uring_queue_exit(&ring);
  return 0;
}
