/* Fills an io_uring's queues to known depths, for tests of uring.lua's
 * per-ring counters (requests in flight, submission and completion queue
 * occupancy), its reaping marks and its exit summary.
 *
 * usage: uring_queues DEPTH NOPS REAP WAIT_MS [registered]
 *        (1 <= DEPTH <= 32, 1 <= NOPS <= 32, 0 <= REAP <= NOPS, WAIT_MS >= 0)
 *
 * One ring (64 entries, no setup flags) and one pipe; with `registered`,
 * the ring's fd registered first (io_uring_register_ring_fd), so that each
 * enter names the ring by its index among the task's registered rings
 * (IORING_ENTER_REGISTERED_RING) instead of its fd. Exactly five
 * io_uring_enter calls, each from io_uring_submit or io_uring_submit_and_wait
 * with the submission queue holding exactly the requests prepared since the
 * enter before (liburing 2.3 enters once per call when it has SQEs):
 *   1. DEPTH IORING_OP_READ of 1 byte from the empty pipe, user_data
 *      1..DEPTH: each finds nothing and waits for it (io_uring_poll_arm).
 *      At entry: sq = DEPTH, in flight 0. At exit: in flight DEPTH, cq 0.
 *   2. NOPS IORING_OP_NOP, user_data 101..: they complete inline.
 *      At entry: sq = NOPS, in flight DEPTH. At exit: cq = NOPS.
 *   3. REAP of those completions are reaped (io_uring_cq_advance), then one
 *      NOP (user_data 201). At entry: REAP reaped since enter 2, sq 1,
 *      cq NOPS - REAP. At exit: cq NOPS - REAP + 1, in flight DEPTH.
 *   Then WAIT_MS milliseconds of sleep, and DEPTH bytes written to the
 *   pipe: every read completes, WAIT_MS after its submission or a little
 *   more.
 *   4. One NOP (user_data 202) with io_uring_submit_and_wait for every
 *      completion: at exit, cq = NOPS - REAP + 2 + DEPTH, in flight 0.
 *   5. Every completion is reaped, then one NOP (user_data 203). At entry:
 *      NOPS - REAP + 2 + DEPTH reaped, sq 1, cq 0.
 * So DEPTH + NOPS + 3 requests: DEPTH READ by the poll path, NOPS + 3 NOP
 * inline, in 5 enters. Exits 0 when every step saw what it expected,
 * 1 (saying why on stderr) otherwise, 2 on bad arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what, int got, int want) {
  fprintf(stderr, "uring_queues: %s: got %d, want %d\n", what, got, want);
  return 1;
}

static long arg(const char *text, long min, long max) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 0);
  return errno || end == text || *end || v < min || v > max ? -1 : v;
}

static void nop(struct io_uring *ring, unsigned long long user_data) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
  io_uring_prep_nop(sqe);
  sqe->user_data = user_data;
}

int main(int argc, char **argv) {
  bool ok = argc == 5 || (argc == 6 && strcmp(argv[5], "registered") == 0);
  long depth = ok ? arg(argv[1], 1, 32) : -1;
  long nops = ok ? arg(argv[2], 1, 32) : -1;
  long reap = ok ? arg(argv[3], 0, nops < 0 ? 0 : nops) : -1;
  long wait_ms = ok ? arg(argv[4], 0, 60000) : -1;
  if (depth < 0 || nops < 0 || reap < 0 || wait_ms < 0) {
    fprintf(stderr,
            "usage: uring_queues DEPTH(1-32) NOPS(1-32) REAP(0-NOPS) WAIT_MS [registered]\n");
    return 2;
  }
  struct io_uring ring;
  int fds[2], err = io_uring_queue_init(64, &ring, 0);
  if (err < 0 || pipe(fds) != 0) {
    fprintf(stderr, "uring_queues: setup: %s\n", strerror(err < 0 ? -err : errno));
    return 1;
  }
  if (argc == 6 && (err = io_uring_register_ring_fd(&ring)) != 1)
    return fail("rings registered", err, 1);
  char bytes[32];
  for (long i = 0; i < depth; i++) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_read(sqe, fds[0], bytes + i, 1, 0);
    sqe->user_data = (unsigned long long)i + 1;
  }
  if ((err = io_uring_submit(&ring)) != depth)  // 1
    return fail("reads submitted", err, (int)depth);
  if ((err = (int)io_uring_cq_ready(&ring)) != 0)
    return fail("completions after the reads", err, 0);
  for (long i = 0; i < nops; i++)
    nop(&ring, 101 + (unsigned long long)i);
  if ((err = io_uring_submit(&ring)) != nops)  // 2
    return fail("nops submitted", err, (int)nops);
  if ((err = (int)io_uring_cq_ready(&ring)) != nops)
    return fail("completions after the nops", err, (int)nops);
  io_uring_cq_advance(&ring, (unsigned)reap);
  nop(&ring, 201);
  if ((err = io_uring_submit(&ring)) != 1)  // 3
    return fail("nop 201 submitted", err, 1);
  struct timespec pause = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
  nanosleep(&pause, NULL);
  if (write(fds[1], bytes, (size_t)depth) != depth)
    return fail("bytes written to the pipe", -1, (int)depth);
  int all = (int)(nops - reap + 2 + depth);
  nop(&ring, 202);
  if ((err = io_uring_submit_and_wait(&ring, (unsigned)all)) != 1)  // 4
    return fail("nop 202 submitted", err, 1);
  if ((err = (int)io_uring_cq_ready(&ring)) != all)
    return fail("completions before the last enter", err, all);
  struct io_uring_cqe *cqe;
  unsigned head, seen = 0;
  io_uring_for_each_cqe(&ring, head, cqe) {
    if (cqe->res < 0)
      return fail("a completion's result", cqe->res, 0);
    seen++;
  }
  io_uring_cq_advance(&ring, seen);
  nop(&ring, 203);
  if ((err = io_uring_submit(&ring)) != 1)  // 5
    return fail("nop 203 submitted", err, 1);
  io_uring_queue_exit(&ring);
  return 0;
}
