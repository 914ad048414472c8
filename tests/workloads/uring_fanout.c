/* Fans io_uring requests out to io-workers: N FIFOs and, forced to io-wq
 * (IOSQE_ASYNC), an OPENAT for reading of each, which blocks its worker
 * until a writer comes, so that io-wq starts a worker for each request.
 * Once N io-workers (iou-wrk-* threads) exist, each FIFO is opened for
 * writing and the N opens complete.
 *
 * usage: uring_fanout N   (1 <= N <= 64; io-wq runs at most 4 per CPU)
 * Exits 0 when N io-workers ran at once and every open succeeded; 1
 * (saying why on stderr) otherwise, 2 on bad arguments. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { kMaxRequests = 64 };

/* This process's io-workers now. */
static int io_workers(void) {
  DIR *tasks = opendir("/proc/self/task");
  if (!tasks)
    return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(tasks));) {
    char path[300], comm[32] = ""; /* room for any d_name */
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    n += fgets(comm, sizeof comm, f) && strncmp(comm, "iou-wrk-", 8) == 0;
    fclose(f);
  }
  closedir(tasks);
  return n;
}

static int fail(const char *what, int err) {
  fprintf(stderr, "uring_fanout: %s: %s\n", what, strerror(err));
  return 1;
}

int main(int argc, char **argv) {
  char *end;
  long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
  if (argc != 2 || *end || n < 1 || n > kMaxRequests) {
    fprintf(stderr, "usage: uring_fanout N(1-%d)\n", kMaxRequests);
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096], fifo[kMaxRequests][4200];
  snprintf(dir, sizeof dir, "%s/uring_fanout-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return fail("mkdtemp", errno);
  struct io_uring ring;
  int err = io_uring_queue_init(kMaxRequests, &ring, 0);
  if (err < 0)
    return fail("io_uring_queue_init", -err);
  for (long i = 0; i < n; i++) {
    snprintf(fifo[i], sizeof fifo[i], "%s/fifo%ld", dir, i);
    if (mkfifo(fifo[i], 0600) < 0)
      return fail("mkfifo", errno);
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_openat(sqe, AT_FDCWD, fifo[i], O_RDONLY | O_CLOEXEC, 0);
    sqe->flags |= IOSQE_ASYNC;
    sqe->user_data = (unsigned long long)i + 1;
  }
  if ((err = io_uring_submit(&ring)) != n)
    return fail("io_uring_submit", err < 0 ? -err : EIO);
  // Every open blocks its worker; io-wq starts the next one for the rest.
  int most = 0;
  for (int waited_ms = 0; (most = io_workers()) < n && waited_ms < 5000; waited_ms++)
    nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
  int writers[kMaxRequests];
  for (long i = 0; i < n; i++)
    if ((writers[i] = open(fifo[i], O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
      return fail("open for writing", errno);
  for (long reaped = 0; reaped < n; reaped++) {
    struct io_uring_cqe *cqe;
    if ((err = io_uring_wait_cqe(&ring, &cqe)) < 0)
      return fail("io_uring_wait_cqe", -err);
    if (cqe->res < 0)
      return fail("openat", -cqe->res);
    close(cqe->res);
    io_uring_cqe_seen(&ring, cqe);
  }
  for (long i = 0; i < n; i++) {
    close(writers[i]);
    unlink(fifo[i]);
  }
  rmdir(dir);
  io_uring_queue_exit(&ring);
  if (most < n) {
    fprintf(stderr, "uring_fanout: %d io-workers at most, not %ld\n", most, n);
    return 1;
  }
  return 0;
}
