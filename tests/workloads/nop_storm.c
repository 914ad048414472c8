/* Submits N io_uring NOPs with user_data 1..N in batches, then exits.
 * usage: nop_storm N [BATCH] [DELAY_MS_BEFORE_START] [DELAY_MS_AFTER_SETUP] [registered]
 * The second delay leaves a ring that exists before a tracer starts; with
 * `registered`, the ring's fd is registered after it (each enter then names
 * the ring by its registered index).
 * N written as SECONDs (e.g. 30s) submits for that long instead, and prints
 * how many NOPs completed (bench/uring.sh's storm at full speed for 30 s). */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: nop_storm N|SECONDSs [BATCH] [DELAY_MS] [DELAY_MS_AFTER_SETUP] [registered]\n");
    return 2;
  }
  char *unit;
  unsigned long n = strtoul(argv[1], &unit, 0);
  /* Time-bounded: no count, a deadline checked once per batch. */
  double seconds = strcmp(unit, "s") == 0 ? (double)n : 0, deadline = 0;
  if (seconds > 0)
    n = (unsigned long)-1;
  unsigned batch = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 32;
  if (argc > 3)
    usleep((useconds_t)strtoul(argv[3], NULL, 0) * 1000);
  if (batch == 0 || batch > 4096)
    batch = 32;
  struct io_uring ring;
  int err = io_uring_queue_init(batch, &ring, 0);
  if (err < 0) {
    fprintf(stderr, "io_uring_queue_init: %d\n", err);
    return 1;
  }
  if (argc > 4)
    usleep((useconds_t)strtoul(argv[4], NULL, 0) * 1000);
  if (argc > 5 && strcmp(argv[5], "registered") == 0 &&
      (err = io_uring_register_ring_fd(&ring)) != 1) {
    fprintf(stderr, "io_uring_register_ring_fd: %d\n", err);
    return 1;
  }
  unsigned long next = 1, done = 0;
  if (seconds > 0)
    deadline = now_seconds() + seconds;
  while (done < n) {
    if (seconds > 0 && now_seconds() >= deadline)
      break;
    unsigned queued = 0;
    while (queued < batch && next <= n) {
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      io_uring_prep_nop(sqe);
      sqe->user_data = next++;
      queued++;
    }
    io_uring_submit_and_wait(&ring, queued);
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      if (cqe->res < 0) {
        fprintf(stderr, "nop failed: %d\n", cqe->res);
        return 1;
      }
      seen++;
    }
    io_uring_cq_advance(&ring, seen);
    done += seen;
  }
  io_uring_queue_exit(&ring);
  if (seconds > 0)
    printf("%lu NOPs in %.3f s\n", done, seconds);
  return 0;
}
