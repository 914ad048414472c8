/* USDT probes (sys/sdt.h), for tests of usdt: probes.
 *
 * usage: usdt_probes [COUNT] [-s]
 *
 * With -s it stops itself (SIGSTOP) first, so that a tracer can attach to
 * its pid (-p) and send SIGCONT.
 *
 * For i = 1..COUNT (default 1), fires moontrace:tick with (i as a long,
 * -i as an int) and moontrace:name with a string; and moontrace:guarded
 * with (i * 10), which has a semaphore: it fires only while a tracer has
 * set it, as a program tests a semaphore to skip the work of computing
 * arguments nobody reads. Then prints "guarded N", how many times the
 * semaphore was set. */
#define _SDT_HAS_SEMAPHORES 1
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>

/* sys/sdt.h gives every probe of a file a semaphore, or none: tick's and
 * name's are not tested. */
unsigned short moontrace_tick_semaphore __attribute__((section(".probes"))) = 0;
unsigned short moontrace_name_semaphore __attribute__((section(".probes"))) = 0;
unsigned short moontrace_guarded_semaphore __attribute__((section(".probes"))) = 0;

int main(int argc, char **argv) {
  long count = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
  long guarded = 0;
  if (argc > 2 && strcmp(argv[2], "-s") == 0)
    raise(SIGSTOP);
  for (long i = 1; i <= count; i++) {
    int negative = (int)-i;
    DTRACE_PROBE2(moontrace, tick, i, negative);
    /* On the stack: a page the program has touched, as a tracer cannot
     * fault one in. */
    char name[16] = "usdt hello";
    DTRACE_PROBE1(moontrace, name, name);
    if (moontrace_guarded_semaphore) {
      DTRACE_PROBE1(moontrace, guarded, i * 10);
      guarded++;
    }
  }
  printf("guarded %ld\n", guarded);
  return 0;
}
