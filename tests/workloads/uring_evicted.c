/* A ring whose entry in the tracer's table of rings another ring takes
 * while one of its io_uring_enter calls waits, for the test of uring.lua's
 * enter slices with `--rings 4` (one bucket of 4 rings).
 *
 * usage: uring_evicted
 *
 * The main thread makes ring A and submits 2 NOPs (one enter), then a
 * 200-ms timeout, and waits for it in a second enter. Meanwhile, 50 ms in,
 * a second thread makes 4 more rings, one after another, and submits one
 * NOP on each: with 4 places, the last of them takes A's, as A submitted
 * least recently. Exits 0 when every request completed as expected, 1
 * (saying why on stderr) otherwise. */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { kOthers = 4 };

static int fail(const char *what, int err) {
  fprintf(stderr, "uring_evicted: %s: %s\n", what, strerror(err < 0 ? -err : err));
  return 1;
}

/* Submits COUNT NOPs on RING and waits for their completions. */
static int nops(struct io_uring *ring, unsigned count) {
  for (unsigned i = 0; i < count; i++)
    io_uring_prep_nop(io_uring_get_sqe(ring));
  int n = io_uring_submit_and_wait(ring, count);
  if (n != (int)count)
    return fail("io_uring_submit_and_wait", n < 0 ? n : -EIO);
  io_uring_cq_advance(ring, count);
  return 0;
}

static void *make_others(void *result) {
  static struct io_uring others[kOthers];
  struct timespec wait = {.tv_nsec = 50 * 1000000};
  nanosleep(&wait, NULL);
  for (int i = 0; i < kOthers; i++) {
    int err = io_uring_queue_init(8, &others[i], 0);
    if (err < 0 || nops(&others[i], 1)) {
      *(int *)result = err < 0 ? fail("io_uring_queue_init", err) : 1;
      return NULL;
    }
  }
  for (int i = 0; i < kOthers; i++)
    io_uring_queue_exit(&others[i]);
  return NULL;
}

int main(void) {
  struct io_uring a;
  int err = io_uring_queue_init(8, &a, 0);
  if (err < 0)
    return fail("io_uring_queue_init", err);
  if (nops(&a, 2))
    return 1;
  int others_result = 0;
  pthread_t others;
  if ((err = pthread_create(&others, NULL, make_others, &others_result)) != 0)
    return fail("pthread_create", err);
  struct __kernel_timespec timeout = {.tv_nsec = 200 * 1000000};
  io_uring_prep_timeout(io_uring_get_sqe(&a), &timeout, 0, 0);
  int n = io_uring_submit_and_wait(&a, 1);
  pthread_join(others, NULL);
  if (n != 1)
    return fail("io_uring_submit_and_wait of the timeout", n < 0 ? n : -EIO);
  struct io_uring_cqe *cqe;
  if ((err = io_uring_peek_cqe(&a, &cqe)) != 0 || cqe->res != -ETIME)
    return fail("the timeout's completion", err ? err : -EIO);
  io_uring_cqe_seen(&a, cqe);
  io_uring_queue_exit(&a);
  return others_result;
}
