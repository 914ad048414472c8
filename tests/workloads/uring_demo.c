/* The bundled demo for scripts/uring.lua: two io_uring rings in one
 * single-threaded process, taking every path a request can take through
 * the kernel, with counts the tests assert exactly.
 *
 * usage: uring_demo        (no arguments; prints nothing on success)
 *
 * Both rings are made first, ring A then ring B, with no flags (no SQPOLL,
 * no IOPOLL, no DEFER_TASKRUN), and exist until the end, so they have
 * distinct fds: 2 io_uring_setup calls, entries 32 (ring A: sq_entries 32,
 * cq_entries 64) then entries 16 (ring B: sq_entries 16, cq_entries 32).
 * Then steps A1 A2 A3 A4 B1 B2 B3 B4 B5 run in this order:
 *
 * Ring A, user_data below 1000:
 *   A1, one io_uring_submit_and_wait(16), interleaved NOP, READ, NOP, ...:
 *     8 IORING_OP_NOP               user_data 101..108   res 0     inline
 *     8 IORING_OP_READ of 4 KiB     user_data 201..208   res 4096  inline
 *       (4 KiB-aligned offsets of a 64 KiB temp file in $TMPDIR or /tmp,
 *       prefilled with pwrite, so every page is cached; inline on ext4,
 *       but on tmpfs, which has no nowait buffered reads on 6.18, they
 *       too go through io-wq)
 *   A2, one io_uring_submit (1); the ring is seen to hold no completion;
 *   then write(2) of 4096 bytes to the pipe, and the completion is reaped:
 *     1 IORING_OP_READ of 4 KiB     user_data 301        res 4096  poll
 *       (of an empty pipe, written only after the submit returned: the
 *       read gets -EAGAIN and io_uring_poll_arm; the write's wakeup gives
 *       io_uring_task_add, then the completion)
 *   A3, one io_uring_submit_and_wait(4):
 *     4 IORING_OP_WRITE of 4 KiB    user_data 401..404   res 4096  io-wq
 *       (buffered writes to the temp file; on 6.18 with ext4 or tmpfs they
 *       are punted with io_uring_queue_async_work and completed on an
 *       iou-wrk-PID thread; were one to complete inline, that is fine)
 *   A4, one io_uring_submit (2); the ring is seen to hold no completion;
 *   then write(2) of 4096 bytes to a new pipe; both completions are
 *   reaped, the read's first:
 *     1 IORING_OP_READ of 4 KiB     user_data 501        res 4096  poll
 *       (of an empty pipe, as in A2: file_get, poll_arm, task_add)
 *     1 IORING_OP_NOP, IOSQE_IO_DRAIN
 *                                   user_data 502        res 0     drained
 *       (behind the pending read: io_uring_defer at submission; once the
 *       read completes, the kernel runs it from task work on this thread
 *       and, on 6.18, punts it to io-wq: io_uring_queue_async_work, then
 *       the completion on an iou-wrk-PID thread. A drain leaves the ring
 *       draining until its next request, which would be deferred too:
 *       A4 is the last step of ring A.)
 *   Ring A: 23 submissions (NOP 9, READ 10, WRITE 4), 23 completions.
 *
 * Ring B, user_data 1000 and above:
 *   B1, one io_uring_submit_and_wait(12):
 *     12 IORING_OP_NOP in 3 chains of 4 linked requests
 *                                   user_data 1001..1012 res 0
 *       (chain c, 0..2, is user_data 1001+4c..1004+4c; all but the last
 *       of a chain carry IOSQE_IO_LINK: 9 io_uring_link events, each
 *       linking a request to the one before it; each chain completes in
 *       order)
 *   B2, one io_uring_submit (1); then 4 times: write(2) of 1 to the
 *   eventfd, reap exactly one completion, see no other:
 *     1 IORING_OP_POLL_ADD, IORING_POLL_ADD_MULTI, POLLIN on an eventfd
 *                                   user_data 2001
 *       4 completions with IORING_CQE_F_MORE, res = POLLIN, one per write
 *       (each write wakes the poll: io_uring_task_add, then the CQE)
 *   B3, one io_uring_submit_and_wait(2):
 *     1 IORING_OP_POLL_REMOVE of user_data 2001
 *                                   user_data 3001       res 0
 *       and the poll's final completion: user_data 2001, res -ECANCELED,
 *       without IORING_CQE_F_MORE
 *   B4, one io_uring_submit_and_wait(3), a chain of 3 linked requests whose
 *   head fails when it is issued; completions in chain order:
 *     1 IORING_OP_READ of a closed fd, IOSQE_IO_LINK
 *                                   user_data 4001       res -EBADF
 *       (io_uring_file_get, then its completion)
 *     2 IORING_OP_NOP               user_data 4002, 4003 res -ECANCELED
 *       (4002 carries IOSQE_IO_LINK: 2 io_uring_link events, 4002 after
 *       4001 and 4003 after 4002. Neither is run: after the head's
 *       completion the kernel fires 2 io_uring_fail_link events, whose req
 *       and user_data are the head's (4001) and whose link is the
 *       cancelled request, 4002 then 4003; then their completions.)
 *   B5, one io_uring_submit_and_wait(1):
 *     1 IORING_OP_NOP with sqe->flags 0x80, a bit no IOSQE_ flag uses
 *                                   user_data 5001       res -EINVAL
 *       (rejected by io_init_req: io_uring_req_failed, error -EINVAL, then
 *       its completion. The kernel fires no io_uring_submit_req for it,
 *       and counts it as submitted: the enter returns 1.)
 *   Ring B: 18 submissions (NOP 15, POLL_ADD 1, POLL_REMOVE 1, READ 1), 22
 *   completions: 4 with IORING_CQE_F_MORE (all user_data 2001), 18 final.
 *
 * In all: 41 requests, each submitted once and completed finally once; 45
 * completions, 4 of them with IORING_CQE_F_MORE; 40 io_uring_submit_req
 * events (all but 5001). The io_uring_enter calls' to_submit sum to 41: 23
 * on ring A's fd (16, 1, 4, 2), 18 on ring B's (12, 1, 1, 3, 1); any other
 * enter (a wait) submits 0. Hops: 11 io_uring_link, 2 io_uring_poll_arm
 * (301, 501), 1 io_uring_defer (502), 2 io_uring_fail_link (head 4001),
 * 1 io_uring_req_failed (5001). No registered files or buffers, no
 * threads of our own: the only other threads are the kernel's iou-wrk
 * workers, and every wakeup comes from this process's own write(2) calls,
 * so every event of a request happens in this process.
 *
 * Every completion is checked (expected user_data, seen once, res, flags,
 * link order, data read); on any failure it prints why on stderr and exits
 * 1 at once. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tmpfile.h"

enum { kBlock = 4096, kFileSize = 64 * 1024 };
enum { kEntriesA = 32, kEntriesB = 16 };
enum { kNops = 8, kReads = 8, kWrites = 4, kChains = 3, kChainLength = 4, kPollShots = 4 };
enum {
  kNopData = 101,
  kReadData = 201,
  kPipeData = 301,
  kWriteData = 401,
  kLinkData = 1001,
  kPollData = 2001,
  kRemoveData = 3001,
  kDrainReadData = 501,
  kDrainData = 502,
  kFailHeadData = 4001,
  kCancelledData = 4002, /* and 4003 */
  kRejectedData = 5001,
};
enum { kCancelled = 2 };
/* An sqe->flags bit that no IOSQE_ flag uses (6.18 has bits 0..6). */
enum { kUndefinedSqeFlag = 0x80 };

static void fail(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  fputs("uring_demo: ", stderr);
  vfprintf(stderr, format, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static struct io_uring_sqe *sqe_of(struct io_uring *ring, uint64_t user_data) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
  if (!sqe)
    fail("no free SQE for user_data=%llu", (unsigned long long)user_data);
  return sqe;
}

/* Submits everything queued, which must be `count` SQEs, waiting for
 * `wait` completions. */
static void submit(struct io_uring *ring, unsigned count, unsigned wait, const char *step) {
  int ret = wait ? io_uring_submit_and_wait(ring, wait) : io_uring_submit(ring);
  if (ret < 0)
    fail("%s: submit: %s", step, strerror(-ret));
  if ((unsigned)ret != count)
    fail("%s: submitted %d of %u", step, ret, count);
}

struct completion {
  uint64_t user_data;
  int res;
  unsigned flags;
};

static struct completion reap(struct io_uring *ring, const char *step) {
  struct io_uring_cqe *cqe;
  int err = io_uring_wait_cqe(ring, &cqe);
  if (err < 0)
    fail("%s: wait_cqe: %s", step, strerror(-err));
  struct completion c = {cqe->user_data, cqe->res, cqe->flags};
  io_uring_cqe_seen(ring, cqe);
  return c;
}

static void no_completion_yet(struct io_uring *ring, const char *step) {
  struct io_uring_cqe *cqe;
  if (io_uring_peek_cqe(ring, &cqe) == 0)
    fail("%s: unexpected early completion user_data=%llu res=%d", step,
         (unsigned long long)cqe->user_data, cqe->res);
}

static void expect(const struct completion *c, int res, int more, const char *step) {
  if (c->res != res)
    fail("%s: user_data=%llu res=%d (%s), expected %d", step, (unsigned long long)c->user_data,
         c->res, c->res < 0 ? strerror(-c->res) : "ok", res);
  if (!!(c->flags & IORING_CQE_F_MORE) != more)
    fail("%s: user_data=%llu flags=%#x, expected IORING_CQE_F_MORE %s", step,
         (unsigned long long)c->user_data, c->flags, more ? "set" : "clear");
}

static char bufs[kReads + kWrites][kBlock] __attribute__((aligned(kBlock)));
static char pipe_buf[kBlock];

/* Ring A: inline NOPs and cached reads, a read that waits on a pipe (poll),
 * buffered writes (io-wq), a drained NOP deferred behind a pending read. */
static void ring_a(struct io_uring *ring, int file) {
  /* A1: NOPs and reads, interleaved, one batch. */
  for (int i = 0; i < kNops; i++) {
    struct io_uring_sqe *sqe = sqe_of(ring, kNopData + i);
    io_uring_prep_nop(sqe);
    sqe->user_data = kNopData + i;
    sqe = sqe_of(ring, kReadData + i);
    io_uring_prep_read(sqe, file, bufs[i], kBlock, (uint64_t)(i * 7 % 16) * kBlock);
    sqe->user_data = kReadData + i;
  }
  submit(ring, kNops + kReads, kNops + kReads, "A1");
  unsigned char seen[kNops + kReads] = {0};
  for (int i = 0; i < kNops + kReads; i++) {
    struct completion c = reap(ring, "A1");
    int slot;
    if (c.user_data >= kNopData && c.user_data < kNopData + kNops)
      slot = (int)(c.user_data - kNopData);
    else if (c.user_data >= kReadData && c.user_data < kReadData + kReads)
      slot = kNops + (int)(c.user_data - kReadData);
    else
      fail("A1: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
    if (seen[slot]++)
      fail("A1: user_data=%llu completed twice", (unsigned long long)c.user_data);
    expect(&c, slot < kNops ? 0 : kBlock, 0, "A1");
  }
  for (int i = 0; i < kReads; i++)
    for (int j = 0; j < kBlock; j++)
      if (bufs[i][j] != 'd')
        fail("A1: read user_data=%d got wrong data", kReadData + i);

  /* A2: a read of an empty pipe, written once the submit has returned. */
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    fail("A2: pipe: %s", strerror(errno));
  struct io_uring_sqe *sqe = sqe_of(ring, kPipeData);
  io_uring_prep_read(sqe, fds[0], pipe_buf, kBlock, 0);
  sqe->user_data = kPipeData;
  submit(ring, 1, 0, "A2");
  no_completion_yet(ring, "A2");
  static char message[kBlock];
  memset(message, 'p', sizeof message);
  if (write(fds[1], message, sizeof message) != (ssize_t)sizeof message)
    fail("A2: write to the pipe: %s", strerror(errno));
  struct completion c = reap(ring, "A2");
  if (c.user_data != kPipeData)
    fail("A2: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
  expect(&c, kBlock, 0, "A2");
  if (memcmp(pipe_buf, message, kBlock) != 0)
    fail("A2: pipe read got wrong data");
  close(fds[0]);
  close(fds[1]);

  /* A3: buffered writes, one batch. */
  for (int i = 0; i < kWrites; i++) {
    char *buf = bufs[kReads + i];
    memset(buf, 'w', kBlock);
    sqe = sqe_of(ring, kWriteData + i);
    io_uring_prep_write(sqe, file, buf, kBlock, (uint64_t)(i * 5 % 16) * kBlock);
    sqe->user_data = kWriteData + i;
  }
  submit(ring, kWrites, kWrites, "A3");
  unsigned char written[kWrites] = {0};
  for (int i = 0; i < kWrites; i++) {
    c = reap(ring, "A3");
    if (c.user_data < kWriteData || c.user_data >= kWriteData + kWrites)
      fail("A3: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
    if (written[c.user_data - kWriteData]++)
      fail("A3: user_data=%llu completed twice", (unsigned long long)c.user_data);
    expect(&c, kBlock, 0, "A3");
  }

  /* A4: a drained NOP behind a read of an empty pipe; the ring keeps
   * draining afterwards, so this is ring A's last step. */
  if (pipe2(fds, O_CLOEXEC) != 0)
    fail("A4: pipe: %s", strerror(errno));
  memset(pipe_buf, 0, sizeof pipe_buf);
  sqe = sqe_of(ring, kDrainReadData);
  io_uring_prep_read(sqe, fds[0], pipe_buf, kBlock, 0);
  sqe->user_data = kDrainReadData;
  sqe = sqe_of(ring, kDrainData);
  io_uring_prep_nop(sqe);
  sqe->user_data = kDrainData;
  sqe->flags |= IOSQE_IO_DRAIN;
  submit(ring, 2, 0, "A4");
  no_completion_yet(ring, "A4");
  if (write(fds[1], message, sizeof message) != (ssize_t)sizeof message)
    fail("A4: write to the pipe: %s", strerror(errno));
  c = reap(ring, "A4");
  if (c.user_data != kDrainReadData)
    fail("A4: completion user_data=%llu before the read's", (unsigned long long)c.user_data);
  expect(&c, kBlock, 0, "A4");
  if (memcmp(pipe_buf, message, kBlock) != 0)
    fail("A4: pipe read got wrong data");
  c = reap(ring, "A4");
  if (c.user_data != kDrainData)
    fail("A4: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
  expect(&c, 0, 0, "A4");
  close(fds[0]);
  close(fds[1]);
  no_completion_yet(ring, "ring A end");
}

/* Ring B: linked chains of NOPs, a multishot poll and its removal, a chain
 * whose head fails, a request the kernel rejects before submitting it. */
static void ring_b(struct io_uring *ring) {
  /* B1: chains of linked NOPs, one batch. */
  for (int i = 0; i < kChains * kChainLength; i++) {
    struct io_uring_sqe *sqe = sqe_of(ring, kLinkData + i);
    io_uring_prep_nop(sqe);
    sqe->user_data = kLinkData + i;
    if (i % kChainLength != kChainLength - 1)
      sqe->flags |= IOSQE_IO_LINK;
  }
  submit(ring, kChains * kChainLength, kChains * kChainLength, "B1");
  int next[kChains];
  for (int chain = 0; chain < kChains; chain++)
    next[chain] = 0;
  for (int i = 0; i < kChains * kChainLength; i++) {
    struct completion c = reap(ring, "B1");
    if (c.user_data < kLinkData || c.user_data >= kLinkData + kChains * kChainLength)
      fail("B1: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
    int index = (int)(c.user_data - kLinkData), chain = index / kChainLength;
    if (index % kChainLength != next[chain]++)
      fail("B1: linked NOP user_data=%llu completed out of order", (unsigned long long)c.user_data);
    expect(&c, 0, 0, "B1");
  }

  /* B2: a multishot poll on an eventfd, woken by 4 writes. */
  int efd = eventfd(0, EFD_CLOEXEC);
  if (efd < 0)
    fail("B2: eventfd: %s", strerror(errno));
  struct io_uring_sqe *sqe = sqe_of(ring, kPollData);
  io_uring_prep_poll_multishot(sqe, efd, POLLIN);
  sqe->user_data = kPollData;
  submit(ring, 1, 0, "B2");
  no_completion_yet(ring, "B2");
  for (int shot = 0; shot < kPollShots; shot++) {
    uint64_t one = 1;
    if (write(efd, &one, sizeof one) != (ssize_t)sizeof one)
      fail("B2: write to the eventfd: %s", strerror(errno));
    struct completion c = reap(ring, "B2");
    if (c.user_data != kPollData)
      fail("B2: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
    expect(&c, POLLIN, 1, "B2");
    no_completion_yet(ring, "B2");
  }

  /* B3: remove the poll: its own completion and the poll's last one. */
  sqe = sqe_of(ring, kRemoveData);
  io_uring_prep_poll_remove(sqe, kPollData);
  sqe->user_data = kRemoveData;
  submit(ring, 1, 2, "B3");
  int removed = 0, cancelled = 0;
  for (int i = 0; i < 2; i++) {
    struct completion c = reap(ring, "B3");
    if (c.user_data == kRemoveData && !removed++)
      expect(&c, 0, 0, "B3");
    else if (c.user_data == kPollData && !cancelled++)
      expect(&c, -ECANCELED, 0, "B3");
    else
      fail("B3: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
  }
  close(efd);

  /* B4: a chain whose head, a read of a closed fd, fails when issued: the
   * two NOPs linked behind it are cancelled. */
  int gone[2];
  if (pipe2(gone, O_CLOEXEC) != 0)
    fail("B4: pipe: %s", strerror(errno));
  close(gone[0]);
  close(gone[1]);
  static char unread[kBlock];
  sqe = sqe_of(ring, kFailHeadData);
  io_uring_prep_read(sqe, gone[0], unread, kBlock, 0);
  sqe->user_data = kFailHeadData;
  sqe->flags |= IOSQE_IO_LINK;
  for (int i = 0; i < kCancelled; i++) {
    sqe = sqe_of(ring, kCancelledData + i);
    io_uring_prep_nop(sqe);
    sqe->user_data = kCancelledData + i;
    if (i + 1 < kCancelled)
      sqe->flags |= IOSQE_IO_LINK;
  }
  submit(ring, 1 + kCancelled, 1 + kCancelled, "B4");
  for (int i = 0; i < 1 + kCancelled; i++) {
    struct completion c = reap(ring, "B4");
    if (c.user_data != (uint64_t)kFailHeadData + i)
      fail("B4: completion user_data=%llu, expected %d (chain order)",
           (unsigned long long)c.user_data, kFailHeadData + i);
    expect(&c, i == 0 ? -EBADF : -ECANCELED, 0, "B4");
  }

  /* B5: a NOP with an undefined sqe flag, rejected by io_init_req; the
   * kernel still counts it as submitted and completes it. */
  sqe = sqe_of(ring, kRejectedData);
  io_uring_prep_nop(sqe);
  sqe->user_data = kRejectedData;
  sqe->flags |= kUndefinedSqeFlag;
  submit(ring, 1, 1, "B5");
  struct completion c = reap(ring, "B5");
  if (c.user_data != kRejectedData)
    fail("B5: unexpected completion user_data=%llu", (unsigned long long)c.user_data);
  expect(&c, -EINVAL, 0, "B5");
  no_completion_yet(ring, "ring B end");
}

int main(int argc, char **argv) {
  (void)argv;
  if (argc != 1) {
    fprintf(stderr, "usage: uring_demo (no arguments)\n");
    return 2;
  }
  int file = open_tmpfile("uring_demo");
  if (file < 0)
    fail("temporary file: %s", strerror(errno));
  static char fill[kFileSize];
  memset(fill, 'd', sizeof fill);
  if (pwrite(file, fill, sizeof fill, 0) != (ssize_t)sizeof fill)
    fail("prefill: %s", strerror(errno));
  /* Both rings exist from the start to the end, on distinct fds. */
  struct io_uring a, b;
  int err = io_uring_queue_init(kEntriesA, &a, 0);
  if (err < 0)
    fail("ring A: io_uring_queue_init: %s", strerror(-err));
  err = io_uring_queue_init(kEntriesB, &b, 0);
  if (err < 0)
    fail("ring B: io_uring_queue_init: %s", strerror(-err));
  ring_a(&a, file);
  ring_b(&b);
  io_uring_queue_exit(&b);
  io_uring_queue_exit(&a);
  close(file);
  return 0;
}
