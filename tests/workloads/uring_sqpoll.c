/* Submits through an SQ poll thread: a ring made with IORING_SETUP_SQPOLL
 * (the kernel's iou-sqp-PID thread takes the requests from the submission
 * queue), N NOPs (user_data 1..N) in batches of 8, each batch's completions
 * reaped by polling the completion queue. The application enters the ring
 * only to wake the thread, which sleeps at once after it is made: once,
 * as it then stays awake for 10 s without work.
 *
 * usage: uring_sqpoll N   (1 <= N <= 100000)
 * Exits 0 when every NOP completed once, 1 (saying why on stderr) otherwise,
 * 2 on bad arguments. */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBatch = 8 };

int main(int argc, char **argv) {
  char *end;
  long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
  if (argc != 2 || *end || n < 1 || n > 100000) {
    fprintf(stderr, "usage: uring_sqpoll N(1-100000)\n");
    return 2;
  }
  /* The thread stays awake for 10 s without work: long enough for any run. */
  struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL, .sq_thread_idle = 10000};
  struct io_uring ring;
  int err = io_uring_queue_init_params(kBatch, &ring, &p);
  if (err < 0) {
    fprintf(stderr, "uring_sqpoll: io_uring_queue_init_params: %s\n", strerror(-err));
    return 1;
  }
  long next = 1, reaped = 0;
  while (reaped < n) {
    long batch = n - next + 1 < kBatch ? n - next + 1 : kBatch;
    for (long i = 0; i < batch; i++) {
      /* The thread may post completions before it frees their entries. */
      struct io_uring_sqe *sqe;
      while (!(sqe = io_uring_get_sqe(&ring)))
        ;
      io_uring_prep_nop(sqe);
      sqe->user_data = (unsigned long long)next++;
    }
    /* Publishes the entries; enters only to wake a sleeping thread. */
    io_uring_submit(&ring);
    for (long done = 0; done < batch;) {
      struct io_uring_cqe *cqe;
      if (io_uring_peek_cqe(&ring, &cqe) != 0)
        continue;
      if (cqe->user_data != (unsigned long long)(reaped + 1)) {
        fprintf(stderr, "uring_sqpoll: completion of user_data %llu, expected %ld\n",
                (unsigned long long)cqe->user_data, reaped + 1);
        return 1;
      }
      io_uring_cqe_seen(&ring, cqe);
      reaped++;
      done++;
    }
  }
  io_uring_queue_exit(&ring);
  return 0;
}
