/* Rings of processes that come and go, for tests of what uring.lua keeps
 * of a process once it is gone.
 *
 * usage: uring_processes exit N   (1 <= N <= 100000)
 *        uring_processes exec N   (1 <= N <= 100)
 *        uring_processes kept
 *        uring_processes threads
 *        uring_processes exec_kept
 *
 * exit: N children, one after another, each set up a ring (4 entries),
 * submit one IORING_OP_NOP with IOSQE_ASYNC (so that an io-worker runs it)
 * in one io_uring_enter, reap it and exit with the ring open. Then the process itself sets one up,
 * submits 2 NOPs in one io_uring_enter, reaps one, and closes the ring with the other left in its
 * completion queue.
 *
 * exec: the process sets up a ring (4 entries), submits one NOP in one
 * io_uring_enter, reaps it, and execs itself as "uring_processes after FD
 * N", FD the ring's fd, closed by the exec. The new program opens /dev/null
 * at FD, calls io_uring_enter on it (which fails: not a ring) and closes
 * it. Then it execs itself as "uring_processes exec N-1" while N > 1, and
 * else sets up a last ring, submits one NOP in one io_uring_enter, reaps it
 * and closes the ring: N + 1 rings in all, one process.
 *
 * kept: the process sets up a ring (4 entries), registers its fd
 * (io_uring_register_ring_fd) and closes the fd, the registration keeping
 * the ring; then, entering it by its index, submits 2 NOPs in one
 * io_uring_enter, reaps one, and exits with the other left in the ring.
 *
 * threads: the main thread sets up a ring (4 entries), submits one NOP in
 * one io_uring_enter without reaping it, starts a thread and leaves
 * (pthread_exit). The thread, 50 ms later, submits 2 NOPs in one
 * io_uring_enter, reaps all 3 and closes the ring.
 *
 * exec_kept: the process sets up a ring (4 entries), submits one NOP in one
 * io_uring_enter, reaps it, clears the ring fd's close-on-exec flag and
 * execs itself as "uring_processes kept_after FD". The new program calls
 * io_uring_enter on FD to submit nothing (and wait for nothing), and closes
 * it.
 *
 * Exits 0 when all went as said, 1 (saying why on stderr) otherwise, 2 on
 * bad arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what, int err) {
  fprintf(stderr, "uring_processes: %s: %s\n", what, strerror(err < 0 ? -err : err));
  return 1;
}

/* Sets up RING, submits NOPS NOPs (with sqe FLAGS) in one enter and reaps
 * REAP of them. */
static int nops(struct io_uring *ring, unsigned nops, unsigned reap, unsigned flags) {
  int err = io_uring_queue_init(4, ring, 0);
  if (err < 0)
    return fail("io_uring_queue_init", err);
  for (unsigned i = 0; i < nops; i++) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    io_uring_prep_nop(sqe);
    sqe->flags |= flags;
  }
  if ((err = io_uring_submit_and_wait(ring, nops)) != (int)nops)
    return fail("io_uring_submit_and_wait", err < 0 ? err : EIO);
  for (unsigned i = 0; i < reap; i++) {
    struct io_uring_cqe *cqe;
    if ((err = io_uring_peek_cqe(ring, &cqe)) < 0)
      return fail("io_uring_peek_cqe", err);
    io_uring_cqe_seen(ring, cqe);
  }
  return 0;
}

static int children_then_self(long n) {
  for (long i = 0; i < n; i++) {
    pid_t child = fork();
    if (child < 0)
      return fail("fork", errno);
    if (child == 0) {
      struct io_uring ring;
      _exit(nops(&ring, 1, 1, IOSQE_ASYNC));  // the ring left open
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "uring_processes: child %ld failed\n", i + 1);
      return 1;
    }
  }
  struct io_uring ring;
  if (nops(&ring, 2, 1, 0))
    return 1;
  io_uring_queue_exit(&ring);
  return 0;
}

static const char self[] = "/proc/self/exe";

static int ring_then_exec(const char *n) {
  struct io_uring ring;
  if (nops(&ring, 1, 1, 0))
    return 1;
  char fd[16];
  snprintf(fd, sizeof(fd), "%d", ring.ring_fd);
  execl(self, self, "after", fd, n, (char *)NULL);
  return fail("execl", errno);
}

static int after_exec(int fd, long n) {
  int null = open("/dev/null", O_RDONLY);
  if (null < 0)
    return fail("open /dev/null", errno);
  if (null != fd && (dup2(null, fd) != fd || close(null) != 0))
    return fail("dup2", errno);
  if (syscall(__NR_io_uring_enter, fd, 1, 0, 0, NULL, 0) != -1)
    return fail("io_uring_enter on /dev/null", EINVAL);
  if (close(fd) != 0)
    return fail("close", errno);
  if (n > 1) {
    char left[16];
    snprintf(left, sizeof(left), "%ld", n - 1);
    execl(self, self, "exec", left, (char *)NULL);
    return fail("execl", errno);
  }
  struct io_uring ring;
  if (nops(&ring, 1, 1, 0))
    return 1;
  io_uring_queue_exit(&ring);
  return 0;
}

static int kept_by_registration(void) {
  struct io_uring ring;
  int err = io_uring_queue_init(4, &ring, 0);
  if (err < 0)
    return fail("io_uring_queue_init", err);
  if ((err = io_uring_register_ring_fd(&ring)) != 1)
    return fail("io_uring_register_ring_fd", err < 0 ? err : EIO);
  if (close(ring.ring_fd) != 0)
    return fail("close", errno);
  for (int i = 0; i < 2; i++)
    io_uring_prep_nop(io_uring_get_sqe(&ring));
  if ((err = io_uring_submit_and_wait(&ring, 2)) != 2)
    return fail("io_uring_submit_and_wait", err < 0 ? err : EIO);
  struct io_uring_cqe *cqe;
  if ((err = io_uring_peek_cqe(&ring, &cqe)) < 0)
    return fail("io_uring_peek_cqe", err);
  io_uring_cqe_seen(&ring, cqe);
  return 0;
}

static struct io_uring shared;

static void *after_main(void *unused) {
  (void)unused;
  usleep(50 * 1000);
  for (int i = 0; i < 2; i++)
    io_uring_prep_nop(io_uring_get_sqe(&shared));
  int err = io_uring_submit_and_wait(&shared, 3);
  if (err != 2)
    exit(fail("io_uring_submit_and_wait", err < 0 ? err : EIO));
  for (int i = 0; i < 3; i++) {
    struct io_uring_cqe *cqe;
    if ((err = io_uring_wait_cqe(&shared, &cqe)) < 0)
      exit(fail("io_uring_wait_cqe", err));
    io_uring_cqe_seen(&shared, cqe);
  }
  io_uring_queue_exit(&shared);
  return NULL;
}

static int main_leaves_first(void) {
  int err = io_uring_queue_init(4, &shared, 0);
  if (err < 0)
    return fail("io_uring_queue_init", err);
  io_uring_prep_nop(io_uring_get_sqe(&shared));
  if ((err = io_uring_submit_and_wait(&shared, 1)) != 1)
    return fail("io_uring_submit_and_wait", err < 0 ? err : EIO);
  pthread_t thread;
  if ((err = pthread_create(&thread, NULL, after_main, NULL)) != 0)
    return fail("pthread_create", err);
  pthread_exit(NULL);
}

static int exec_keeping_the_ring(void) {
  struct io_uring ring;
  if (nops(&ring, 1, 1, 0))
    return 1;
  if (fcntl(ring.ring_fd, F_SETFD, 0) != 0)
    return fail("fcntl", errno);
  char fd[16];
  snprintf(fd, sizeof(fd), "%d", ring.ring_fd);
  execl(self, self, "kept_after", fd, (char *)NULL);
  return fail("execl", errno);
}

static int enter_kept_ring(int fd) {
  if (syscall(__NR_io_uring_enter, fd, 0, 0, 0, NULL, 0) != 0)
    return fail("io_uring_enter", errno);
  if (close(fd) != 0)
    return fail("close", errno);
  return 0;
}

int main(int argc, char **argv) {
  long n = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
  if (argc == 3 && strcmp(argv[1], "exit") == 0 && n >= 1 && n <= 100000)
    return children_then_self(n);
  if (argc == 2 && strcmp(argv[1], "exec_kept") == 0)
    return exec_keeping_the_ring();
  if (argc == 3 && strcmp(argv[1], "kept_after") == 0 && n >= 3)
    return enter_kept_ring((int)n);
  if (argc == 2 && strcmp(argv[1], "threads") == 0)
    return main_leaves_first();
  if (argc == 2 && strcmp(argv[1], "kept") == 0)
    return kept_by_registration();
  if (argc == 3 && strcmp(argv[1], "exec") == 0 && n >= 1 && n <= 100)
    return ring_then_exec(argv[2]);
  long fd = argc == 4 ? strtol(argv[2], NULL, 10) : 0,
       left = argc == 4 ? strtol(argv[3], NULL, 10) : 0;
  if (argc == 4 && strcmp(argv[1], "after") == 0 && fd >= 3 && left >= 1 && left <= 100)
    return after_exec((int)fd, left);
  fprintf(stderr, "usage: uring_processes exit N | exec N | exec_kept | kept | threads\n");
  return 2;
}
