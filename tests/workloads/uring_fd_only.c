/* A ring with no fd, only a registered index (IORING_SETUP_NO_MMAP |
 * IORING_SETUP_REGISTERED_FD_ONLY, Linux 6.5 and later; raw syscalls, as
 * Debian 12's liburing 2.3 has neither), for tests of uring.lua.
 *
 * usage: uring_fd_only
 *
 * Sets the ring up (4 entries) in memory of its own, then makes exactly two
 * io_uring_enter calls:
 *   1. by the ring's registered index (IORING_ENTER_REGISTERED_RING), one
 *      NOP (user_data 7) submitted and waited for;
 *   2. on fd INDEX of the process, which is no ring (/dev/null is opened
 *      there first): the kernel refuses it (EOPNOTSUPP).
 * Exits 0 when each step did what it should, 1 (saying why on stderr)
 * otherwise, 77 where the kernel cannot set such a ring up. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef IORING_SETUP_NO_MMAP
#define IORING_SETUP_NO_MMAP (1U << 14)
#endif
#ifndef IORING_SETUP_REGISTERED_FD_ONLY
#define IORING_SETUP_REGISTERED_FD_ONLY (1U << 15)
#endif

static int fail(const char *what, long got, long want) {
  fprintf(stderr, "uring_fd_only: %s: got %ld, want %ld\n", what, got, want);
  return 1;
}

int main(void) {
  void *rings = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void *sqes = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (rings == MAP_FAILED || sqes == MAP_FAILED)
    return fail("mmap", -errno, 0);
  memset(rings, 0, 4096);
  memset(sqes, 0, 4096);
  struct io_uring_params p;
  memset(&p, 0, sizeof(p));
  p.flags = IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY;
  /* user_addr in newer headers: the rings' memory, and the entries'. */
  p.cq_off.resv2 = (unsigned long)rings;
  p.sq_off.resv2 = (unsigned long)sqes;
  long index = syscall(__NR_io_uring_setup, 4, &p);
  if (index < 0 && (errno == EINVAL || errno == ENOSYS)) {
    fprintf(stderr, "uring_fd_only: this kernel has no rings without an fd\n");
    return 77;
  }
  if (index < 0)
    return fail("io_uring_setup", -errno, 0);

  unsigned *sq_tail = (unsigned *)((char *)rings + p.sq_off.tail);
  unsigned *sq_array = (unsigned *)((char *)rings + p.sq_off.array);
  unsigned mask = *(unsigned *)((char *)rings + p.sq_off.ring_mask);
  struct io_uring_sqe *sqe = sqes;
  sqe->opcode = IORING_OP_NOP;
  sqe->user_data = 7;
  sq_array[*sq_tail & mask] = 0;
  __atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
  long r = syscall(__NR_io_uring_enter, (unsigned)index, 1, 1,
                   IORING_ENTER_GETEVENTS | IORING_ENTER_REGISTERED_RING, NULL, 0);
  if (r != 1)
    return fail("NOPs submitted by the registered index", r < 0 ? -errno : r, 1);

  /* fd INDEX of the process: /dev/null, no ring. */
  int null = open("/dev/null", O_RDONLY);
  if (null < 0 || (null != index && dup2(null, (int)index) < 0))
    return fail("/dev/null at the index", -errno, index);
  r = syscall(__NR_io_uring_enter, (unsigned)index, 0, 0, 0, NULL, 0);
  if (!(r < 0 && errno == EOPNOTSUPP))
    return fail("io_uring_enter on /dev/null", r < 0 ? -errno : r, -EOPNOTSUPP);
  return 0;
}
