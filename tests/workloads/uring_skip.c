/* Requests that post no completion unless they fail
 * (IOSQE_CQE_SKIP_SUCCESS), for tests of uring.lua's counts.
 *
 * usage: uring_skip
 *
 * One ring (64 entries); 3 batches, each one io_uring_enter that submits
 * 8 NOPs, 6 of them with IOSQE_CQE_SKIP_SUCCESS, and waits for the 2
 * completions the others post; then a 4th enter submitting one READ of fd
 * -1 with IOSQE_CQE_SKIP_SUCCESS, which fails (EBADF) and so posts its
 * completion; then a 5th submitting the same read linked (IOSQE_IO_LINK)
 * to a NOP without the flag: the read fails and posts its completion, and
 * the kernel fails the NOP (ECANCELED) with its completion skipped, as the
 * read asked for its own. So 27 requests, 8 completions, 19 requests
 * without one. Exits 0 when every step saw what it expected, 1 (saying why
 * on stderr) otherwise. */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, int got, int want) {
  fprintf(stderr, "uring_skip: %s: got %d, want %d\n", what, got, want);
  return 1;
}

static int reap(struct io_uring *ring, int want, int res) {
  struct io_uring_cqe *cqe;
  unsigned head, seen = 0;
  io_uring_for_each_cqe(ring, head, cqe) {
    if (cqe->res != res)
      return fail("a completion's result", cqe->res, res);
    seen++;
  }
  io_uring_cq_advance(ring, seen);
  return (int)seen == want ? 0 : fail("completions", (int)seen, want);
}

int main(void) {
  struct io_uring ring;
  int err = io_uring_queue_init(64, &ring, 0);
  if (err < 0) {
    fprintf(stderr, "uring_skip: setup: %s\n", strerror(-err));
    return 1;
  }
  for (int batch = 0; batch < 3; batch++) {
    for (int i = 0; i < 8; i++) {
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      io_uring_prep_nop(sqe);
      sqe->user_data = (unsigned long long)(batch * 8 + i + 1);
      if (i < 6)
        sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    }
    if ((err = io_uring_submit_and_wait(&ring, 2)) != 8)
      return fail("NOPs submitted", err, 8);
    if (reap(&ring, 2, 0))
      return 1;
  }
  static char byte;
  struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
  io_uring_prep_read(sqe, -1, &byte, 1, 0);
  sqe->user_data = 100;
  sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
  if ((err = io_uring_submit_and_wait(&ring, 1)) != 1)
    return fail("the failing read submitted", err, 1);
  if (reap(&ring, 1, -EBADF))
    return 1;
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_read(sqe, -1, &byte, 1, 0);
  sqe->user_data = 101;
  sqe->flags |= IOSQE_CQE_SKIP_SUCCESS | IOSQE_IO_LINK;
  sqe = io_uring_get_sqe(&ring);
  io_uring_prep_nop(sqe);
  sqe->user_data = 102;
  if ((err = io_uring_submit_and_wait(&ring, 1)) != 2)
    return fail("the failing chain submitted", err, 2);
  if (reap(&ring, 1, -EBADF))
    return 1;
  io_uring_queue_exit(&ring);
  return 0;
}
