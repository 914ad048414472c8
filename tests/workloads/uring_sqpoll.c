/* Submits through an SQ poll thread: a ring made with IORING_SETUP_SQPOLL
 * (the kernel's iou-sqp-PID thread takes the requests from the submission
 * queue), N NOPs (user_data 1..N) in batches of 8, each batch's completions
 * reaped by polling the completion queue. The application enters the ring
 * only to wake the thread, which sleeps at once after it is made: once,
 * as it then stays awake for 10 s without work.
 *
 * With `pause MS`, the thread sleeps after 1 ms without work and the
 * application pauses MS ms after each batch: it wakes the thread for each.
 * With `flood`, the application queues all N NOPs as fast as it can, in a
 * queue of 8 entries, waiting for room (IORING_ENTER_SQ_WAIT) whenever the
 * thread has not taken them yet, and reaps them at the end.
 *
 * usage: uring_sqpoll N [pause MS | flood]   (1 <= N <= 100000, or 4096
 *        with flood; 1 <= MS <= 1000)
 * Exits 0 when every NOP completed once, 1 (saying why on stderr) otherwise,
 * 2 on bad arguments. */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kBatch = 8, kFloodMost = 4096 };

static long number(const char *text, long least, long most) {
  char *end;
  long n = strtol(text, &end, 10);
  return *end || n < least || n > most ? -1 : n;
}

/* Reaps completions in order from `*reaped` + 1 up to `upto`. */
static int reap(struct io_uring *ring, long *reaped, long upto) {
  while (*reaped < upto) {
    struct io_uring_cqe *cqe;
    if (io_uring_peek_cqe(ring, &cqe) != 0)
      continue;
    if (cqe->user_data != (unsigned long long)(*reaped + 1)) {
      fprintf(stderr, "uring_sqpoll: completion of user_data %llu, expected %ld\n",
              (unsigned long long)cqe->user_data, *reaped + 1);
      return 1;
    }
    io_uring_cqe_seen(ring, cqe);
    ++*reaped;
  }
  return 0;
}

int main(int argc, char **argv) {
  int flood = argc == 3 && strcmp(argv[2], "flood") == 0;
  long pause_ms = argc == 4 && strcmp(argv[2], "pause") == 0 ? number(argv[3], 1, 1000) : 0;
  long n = argc >= 2 ? number(argv[1], 1, flood ? kFloodMost : 100000) : -1;
  if (n < 0 || pause_ms < 0 || !(argc == 2 || flood || pause_ms)) {
    fprintf(stderr, "usage: uring_sqpoll N(1-100000) [pause MS(1-1000) | flood]\n");
    return 2;
  }
  /* The thread stays awake for 10 s without work (long enough for any
   * run), or 1 ms when the application pauses. Flooded, the completion
   * queue holds them all. */
  struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL | (flood ? IORING_SETUP_CQSIZE : 0),
                              .sq_thread_idle = pause_ms ? 1 : 10000,
                              .cq_entries = kFloodMost};
  struct io_uring ring;
  int err = io_uring_queue_init_params(kBatch, &ring, &p);
  if (err < 0) {
    fprintf(stderr, "uring_sqpoll: io_uring_queue_init_params: %s\n", strerror(-err));
    return 1;
  }
  struct timespec pause = {.tv_sec = pause_ms / 1000, .tv_nsec = pause_ms % 1000 * 1000000};
  long next = 1, reaped = 0;
  while (next <= n) {
    long batch = flood ? n : (n - next + 1 < kBatch ? n - next + 1 : kBatch);
    for (long i = 0; i < batch; i++) {
      /* The thread may post completions before it frees their entries. */
      struct io_uring_sqe *sqe;
      while (!(sqe = io_uring_get_sqe(&ring)))
        if (flood) {
          io_uring_submit(&ring);
          io_uring_sqring_wait(&ring);
        }
      io_uring_prep_nop(sqe);
      sqe->user_data = (unsigned long long)next++;
    }
    /* Publishes the entries; enters only to wake a sleeping thread. */
    io_uring_submit(&ring);
    if (reap(&ring, &reaped, next - 1))
      return 1;
    if (pause_ms)
      nanosleep(&pause, NULL);
  }
  io_uring_queue_exit(&ring);
  return 0;
}
