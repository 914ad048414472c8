/* Submits a known mix of io_uring requests on one ring, for tests that count
 * or aggregate per opcode.
 *
 * usage: uring_mix NOPS READS WRITES FSYNCS
 *
 * Guarantee: one io_uring (depth 64, no flags: no SQPOLL, no IOPOLL) gets
 * exactly NOPS IORING_OP_NOP, READS IORING_OP_READ (4 KiB), WRITES
 * IORING_OP_WRITE (4 KiB) and FSYNCS IORING_OP_FSYNC requests, each
 * submitted and completed exactly once: no links, no retries, no other
 * requests. The opcodes are interleaved round-robin (NOP, READ, WRITE,
 * FSYNC, skipping kinds that are used up), user_data is the sequence
 * number 1..TOTAL in submission order, and batches of at most 16 go to the
 * kernel with io_uring_submit_and_wait. Reads and writes use 4 KiB-aligned
 * offsets inside an unlinked 64 KiB temporary file (O_TMPFILE in $TMPDIR
 * or /tmp, else mkstemp + unlink), prefilled with pwrite before the ring
 * exists. Every read and write must transfer 4096 bytes and every
 * completion must have res >= 0; otherwise, or if a submit fails or is
 * short, it prints why on stderr and exits 1 at once. On success it prints
 * nothing and exits 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpfile.h"

enum { kDepth = 64, kBatch = 16, kBlock = 4096, kFileSize = 64 * 1024 };
enum { kNop, kRead, kWrite, kFsync, kKinds };
static const char *const kNames[kKinds] = {"nop", "read", "write", "fsync"};

static int parse_count(const char *text, unsigned long *out) {
  char *end;
  errno = 0;
  *out = strtoul(text, &end, 0);
  return errno == 0 && end != text && *end == '\0' && text[0] != '-';
}

int main(int argc, char **argv) {
  unsigned long left[kKinds];
  if (argc != 5 || !parse_count(argv[1], &left[kNop]) || !parse_count(argv[2], &left[kRead]) ||
      !parse_count(argv[3], &left[kWrite]) || !parse_count(argv[4], &left[kFsync])) {
    fprintf(stderr, "usage: uring_mix NOPS READS WRITES FSYNCS\n");
    return 2;
  }

  int fd = open_tmpfile("uring_mix");
  if (fd < 0) {
    fprintf(stderr, "uring_mix: temporary file: %s\n", strerror(errno));
    return 1;
  }
  static char fill[kFileSize];
  memset(fill, 'm', sizeof fill);
  if (pwrite(fd, fill, sizeof fill, 0) != (ssize_t)sizeof fill) {
    fprintf(stderr, "uring_mix: prefill: %s\n", strerror(errno));
    return 1;
  }

  struct io_uring ring;
  int err = io_uring_queue_init(kDepth, &ring, 0);
  if (err < 0) {
    fprintf(stderr, "uring_mix: io_uring_queue_init: %s\n", strerror(-err));
    return 1;
  }

  /* One buffer per slot of a batch: a batch is fully reaped before the
   * next one reuses them. */
  static char bufs[kBatch][kBlock] __attribute__((aligned(kBlock)));
  unsigned long total = left[kNop] + left[kRead] + left[kWrite] + left[kFsync];
  unsigned long seq = 0, reads = 0, writes = 0;
  unsigned char kind_of[kBatch];
  int next_kind = kNop;
  while (seq < total) {
    unsigned queued = 0;
    unsigned long first = seq + 1;
    while (queued < kBatch && seq < total) {
      while (left[next_kind] == 0)
        next_kind = (next_kind + 1) % kKinds;
      int kind = next_kind;
      next_kind = (next_kind + 1) % kKinds;
      left[kind]--;

      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      if (!sqe) {
        fprintf(stderr, "uring_mix: no free SQE\n");
        return 1;
      }
      /* Offsets vary, stay inside the file, and are 4 KiB aligned. */
      switch (kind) {
        case kNop: io_uring_prep_nop(sqe); break;
        case kRead:
          io_uring_prep_read(sqe, fd, bufs[queued], kBlock, (reads++ * 7 % 16) * kBlock);
          break;
        case kWrite:
          memset(bufs[queued], 'w', kBlock);
          io_uring_prep_write(sqe, fd, bufs[queued], kBlock, (writes++ * 5 % 16) * kBlock);
          break;
        case kFsync: io_uring_prep_fsync(sqe, fd, 0); break;
      }
      sqe->user_data = ++seq;
      kind_of[queued++] = (unsigned char)kind;
    }

    int ret = io_uring_submit_and_wait(&ring, queued);
    if (ret < 0) {
      fprintf(stderr, "uring_mix: submit: %s\n", strerror(-ret));
      return 1;
    }
    if ((unsigned)ret != queued) {
      fprintf(stderr, "uring_mix: submitted %d of %u\n", ret, queued);
      return 1;
    }

    /* submit_and_wait normally returns with all completions posted; wait
     * for stragglers anyway. Waiting never submits anything. */
    unsigned char seen[kBatch] = {0};
    for (unsigned reaped = 0; reaped < queued; reaped++) {
      struct io_uring_cqe *cqe;
      err = io_uring_wait_cqe(&ring, &cqe);
      if (err < 0) {
        fprintf(stderr, "uring_mix: wait_cqe: %s\n", strerror(-err));
        return 1;
      }
      unsigned long user_data = (unsigned long)cqe->user_data;
      int res = cqe->res;
      io_uring_cqe_seen(&ring, cqe);
      if (user_data < first || user_data >= first + queued || seen[user_data - first]) {
        fprintf(stderr, "uring_mix: unexpected completion user_data=%lu\n", user_data);
        return 1;
      }
      seen[user_data - first] = 1;
      int kind = kind_of[user_data - first];
      if (res < 0 || ((kind == kRead || kind == kWrite) && res != kBlock)) {
        fprintf(stderr, "uring_mix: %s user_data=%lu failed: res=%d%s%s\n", kNames[kind], user_data,
                res, res < 0 ? " " : "", res < 0 ? strerror(-res) : "");
        return 1;
      }
    }
  }

  io_uring_queue_exit(&ring);
  close(fd);
  return 0;
}
