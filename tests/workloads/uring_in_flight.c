/* Holds many io_uring requests in flight at once: N timeouts of 100 ms on
 * one ring, submitted in batches of up to 4096 (one io_uring_enter each),
 * then reaped, for tests of uring.lua's table of requests in flight.
 *
 * usage: uring_in_flight N   (1 <= N <= 65536)
 * Exits 0 when every timeout completed with -ETIME, 1 (saying why on
 * stderr) otherwise, 2 on bad arguments. */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  long n = argc == 2 ? strtol(argv[1], NULL, 0) : 0;
  if (n < 1 || n > 65536) {
    fprintf(stderr, "usage: uring_in_flight N(1-65536)\n");
    return 2;
  }
  struct io_uring ring;
  struct io_uring_params p;
  memset(&p, 0, sizeof(p));
  p.flags = IORING_SETUP_CQSIZE;
  p.cq_entries = 65536;
  int err = io_uring_queue_init_params(4096, &ring, &p);
  if (err < 0) {
    fprintf(stderr, "uring_in_flight: setup: %s\n", strerror(-err));
    return 1;
  }
  struct __kernel_timespec wait = {0, 100 * 1000 * 1000};
  for (long done = 0; done < n;) {
    long batch = n - done < 4096 ? n - done : 4096;
    for (long i = 0; i < batch; i++) {
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      io_uring_prep_timeout(sqe, &wait, 0, 0);
      sqe->user_data = (unsigned long long)(done + i + 1);
    }
    if ((err = io_uring_submit(&ring)) != batch) {
      fprintf(stderr, "uring_in_flight: submitted %d of %ld\n", err, batch);
      return 1;
    }
    done += batch;
  }
  for (long reaped = 0; reaped < n;) {
    struct io_uring_cqe *cqe;
    if ((err = io_uring_wait_cqe(&ring, &cqe)) < 0) {
      fprintf(stderr, "uring_in_flight: wait: %s\n", strerror(-err));
      return 1;
    }
    if (cqe->res != -ETIME) {
      fprintf(stderr, "uring_in_flight: a timeout ended with %d\n", cqe->res);
      return 1;
    }
    io_uring_cqe_seen(&ring, cqe);
    reaped++;
  }
  io_uring_queue_exit(&ring);
  return 0;
}
