/* Overflows an io_uring's completion queue: a ring of 4 submission and 4
 * completion entries, BATCHES batches of 4 NOPs (user_data 1..4*BATCHES)
 * submitted without reaping any, then every completion reaped. The first
 * batch fills the completion queue; every later NOP completes through the
 * kernel's overflow list (io_uring_cqe_overflow), none through
 * io_uring_complete, and reaches the queue when reaping makes room.
 *
 * usage: uring_overflow BATCHES   (1 <= BATCHES <= 1024)
 * Exits 0 when every NOP completed once, nothing was dropped and the queue
 * overflowed (when BATCHES > 1); 1 (saying why on stderr) otherwise, 2 on
 * bad arguments. */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kEntries = 4 };

int main(int argc, char **argv) {
  char *end;
  long batches = argc == 2 ? strtol(argv[1], &end, 10) : 0;
  if (argc != 2 || *end || batches < 1 || batches > 1024) {
    fprintf(stderr, "usage: uring_overflow BATCHES(1-1024)\n");
    return 2;
  }
  struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE, .cq_entries = kEntries};
  struct io_uring ring;
  int err = io_uring_queue_init_params(kEntries, &ring, &p);
  if (err < 0) {
    fprintf(stderr, "uring_overflow: io_uring_queue_init_params: %s\n", strerror(-err));
    return 1;
  }
  long n = batches * kEntries;
  for (long b = 0; b < batches; b++) {
    for (int i = 0; i < kEntries; i++) {
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      io_uring_prep_nop(sqe);
      sqe->user_data = (unsigned long long)(b * kEntries + i + 1);
    }
    if ((err = io_uring_submit(&ring)) != kEntries) {
      fprintf(stderr, "uring_overflow: batch %ld: io_uring_submit: %d (%s)\n", b + 1, err,
              err < 0 ? strerror(-err) : "short");
      return 1;
    }
  }
  int overflowed = (*ring.sq.kflags & IORING_SQ_CQ_OVERFLOW) != 0;
  char *seen = calloc((size_t)n + 1, 1);
  for (long reaped = 0; reaped < n; reaped++) {
    struct io_uring_cqe *cqe;
    if ((err = io_uring_wait_cqe(&ring, &cqe)) < 0) {
      fprintf(stderr, "uring_overflow: io_uring_wait_cqe: %s\n", strerror(-err));
      return 1;
    }
    unsigned long long ud = cqe->user_data;
    if (ud < 1 || ud > (unsigned long long)n || seen[ud]++) {
      fprintf(stderr, "uring_overflow: unexpected completion of user_data %llu\n", ud);
      return 1;
    }
    io_uring_cqe_seen(&ring, cqe);
  }
  if (*ring.cq.koverflow) {
    fprintf(stderr, "uring_overflow: the kernel dropped %u completions\n", *ring.cq.koverflow);
    return 1;
  }
  if (batches > 1 && !overflowed) {
    fprintf(stderr, "uring_overflow: the completion queue did not overflow\n");
    return 1;
  }
  free(seen);
  io_uring_queue_exit(&ring);
  return 0;
}
