/* Opens several io_uring rings, for tests of how many rings uring.lua
 * follows at once.
 *
 * usage: uring_rings RINGS NOPS together|one_by_one
 *        (1 <= RINGS <= 64, 1 <= NOPS <= 8)
 *
 * together: all RINGS rings (8 entries each, no setup flags) are set up
 * first, in order; then each in the same order submits NOPS
 * IORING_OP_NOP (user_data 1..NOPS) in one io_uring_enter and reaps them;
 * then all are closed. one_by_one: each ring is set up, submits and reaps
 * its NOPs the same way, and is closed before the next is set up. Exits 0
 * when every NOP completed, 1 (saying why on stderr) otherwise, 2 on bad
 * arguments. */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxRings = 64, kMaxNops = 8, kEntries = 8 };

static int nops_on(struct io_uring *ring, int nops) {
  for (int i = 0; i < nops; i++) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    io_uring_prep_nop(sqe);
    sqe->user_data = (unsigned long long)(i + 1);
  }
  int err = io_uring_submit_and_wait(ring, (unsigned)nops);
  if (err != nops) {
    fprintf(stderr, "uring_rings: io_uring_submit_and_wait: %d (%s)\n", err,
            err < 0 ? strerror(-err) : "short");
    return 1;
  }
  for (int i = 0; i < nops; i++) {
    struct io_uring_cqe *cqe;
    if ((err = io_uring_wait_cqe(ring, &cqe)) < 0 || cqe->res != 0) {
      fprintf(stderr, "uring_rings: completion %d: %s\n", i + 1,
              err < 0 ? strerror(-err) : "failed");
      return 1;
    }
    io_uring_cqe_seen(ring, cqe);
  }
  return 0;
}

static int set_up(struct io_uring *ring) {
  int err = io_uring_queue_init(kEntries, ring, 0);
  if (err < 0)
    fprintf(stderr, "uring_rings: io_uring_queue_init: %s\n", strerror(-err));
  return err < 0;
}

int main(int argc, char **argv) {
  int rings = argc == 4 ? atoi(argv[1]) : 0, nops = argc == 4 ? atoi(argv[2]) : 0;
  int together = argc == 4 && strcmp(argv[3], "together") == 0;
  if (rings < 1 || rings > kMaxRings || nops < 1 || nops > kMaxNops ||
      (!together && strcmp(argv[3], "one_by_one") != 0)) {
    fprintf(stderr, "usage: uring_rings RINGS NOPS together|one_by_one\n");
    return 2;
  }
  static struct io_uring ring[kMaxRings];
  for (int r = 0; r < rings; r++) {
    if (together && r == 0)
      for (int i = 0; i < rings; i++)
        if (set_up(&ring[i]))
          return 1;
    if ((!together && set_up(&ring[r])) || nops_on(&ring[r], nops))
      return 1;
    if (!together)
      io_uring_queue_exit(&ring[r]);
  }
  if (together)
    for (int r = 0; r < rings; r++)
      io_uring_queue_exit(&ring[r]);
  return 0;
}
