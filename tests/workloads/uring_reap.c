/* Reaps an io_uring's completions late, and leaves some unreaped: BATCHES
 * batches of 4 NOPs, each submitted with io_uring_enter and reaped from
 * the completion queue DELAY_MS later without entering the kernel (so the
 * kernel sees the reaping at the next batch's enter); then LEFT NOPs that
 * complete and are never reaped. The process then exits with the ring
 * open, or with `close`, closes it first.
 *
 * usage: uring_reap BATCHES DELAY_MS LEFT [close]
 *        (1 <= BATCHES <= 1000, 0 <= DELAY_MS <= 1000, 0 <= LEFT <= 8)
 * Exits 0 when every reaped NOP completed and the LEFT ones are ready; 1
 * (saying why on stderr) otherwise, 2 on bad arguments. */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kBatch = 4, kEntries = 16 };

static long number(const char *text, long most) {
  char *end;
  long n = strtol(text, &end, 10);
  return *end || n < 0 || n > most ? -1 : n;
}

static int submit_nops(struct io_uring *ring, int n) {
  for (int i = 0; i < n; i++)
    io_uring_prep_nop(io_uring_get_sqe(ring));
  int err = io_uring_submit(ring);
  if (err != n) {
    fprintf(stderr, "uring_reap: io_uring_submit: %d (%s)\n", err,
            err < 0 ? strerror(-err) : "short");
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  long batches = argc >= 4 ? number(argv[1], 1000) : -1;
  long delay_ms = argc >= 4 ? number(argv[2], 1000) : -1;
  long left = argc >= 4 ? number(argv[3], 8) : -1;
  int close_ring = argc == 5 && strcmp(argv[4], "close") == 0;
  if (argc < 4 || argc > 5 || batches < 1 || delay_ms < 0 || left < 0 ||
      (argc == 5 && !close_ring)) {
    fprintf(stderr, "usage: uring_reap BATCHES(1-1000) DELAY_MS(0-1000) LEFT(0-8) [close]\n");
    return 2;
  }
  struct io_uring ring;
  int err = io_uring_queue_init(kEntries, &ring, 0);
  if (err < 0) {
    fprintf(stderr, "uring_reap: io_uring_queue_init: %s\n", strerror(-err));
    return 1;
  }
  struct timespec delay = {.tv_sec = delay_ms / 1000, .tv_nsec = delay_ms % 1000 * 1000000};
  for (long b = 0; b < batches; b++) {
    if (submit_nops(&ring, kBatch))
      return 1;
    nanosleep(&delay, NULL);
    struct io_uring_cqe *cqes[kBatch];
    unsigned got = io_uring_peek_batch_cqe(&ring, cqes, kBatch);
    if (got != kBatch) {
      fprintf(stderr, "uring_reap: batch %ld: %u of %d completions ready\n", b + 1, got, kBatch);
      return 1;
    }
    io_uring_cq_advance(&ring, got);
  }
  if (left && submit_nops(&ring, (int)left))
    return 1;
  if (io_uring_cq_ready(&ring) != (unsigned)left) {
    fprintf(stderr, "uring_reap: %u completions ready, not %ld\n", io_uring_cq_ready(&ring), left);
    return 1;
  }
  if (close_ring)
    io_uring_queue_exit(&ring);
  return 0;
}
