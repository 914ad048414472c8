/* Known user and kernel stacks, for tests of kstack and ustack.
 *
 * usage: call_chain [COUNT]
 *
 * main calls chain_outer, which calls chain_middle, which calls
 * chain_inner, which makes a getppid(2) system call: COUNT times (default
 * 1). Built with frame pointers and DWARF, as the kernel walks user stacks
 * by frame pointers; on x86-64 the system call is made in chain_inner
 * itself (by chain_syscall, inlined there), as the C library's functions
 * keep no frame pointer. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Inlined into chain_inner: only DWARF names it. */
static inline __attribute__((always_inline)) void chain_syscall(void) {
#ifdef __x86_64__
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
  (void)ret;
#else
  getppid();
#endif
}

__attribute__((noinline)) void chain_inner(void) {
  chain_syscall();
}

__attribute__((noinline)) void chain_middle(void) {
  chain_inner();
  __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) void chain_outer(void) {
  chain_middle();
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
  long count = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
  for (long i = 0; i < count; i++)
    chain_outer();
  return 0;
}
