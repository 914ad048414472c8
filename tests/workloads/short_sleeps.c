/* Sleeps COUNT times for MICROSECONDS each, in each of THREADS threads
 * (default 1): every sleep arms one high resolution timer in its thread and
 * fires it in an interrupt, for tests of records written by programs that
 * interrupt others on the same CPU. With several threads on one CPU, timers
 * fire whatever that CPU is running.
 *
 * usage: short_sleeps COUNT MICROSECONDS [THREADS]
 *
 * Timer slack is 1 ns, so that the timers fire as often as asked. Each
 * clock_nanosleep(2) must sleep its whole time, else it prints why on
 * stderr and exits 1. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static unsigned long count, micros;

static int parse(const char *text, unsigned long *out) {
  char *end;
  errno = 0;
  *out = strtoul(text, &end, 10);
  return errno == 0 && isdigit((unsigned char)text[0]) && *end == '\0';
}

static void *sleeper(void *unused) {
  (void)unused;
  if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) != 0) {
    perror("short_sleeps: PR_SET_TIMERSLACK");
    exit(1);
  }
  struct timespec wait = {0, (long)micros * 1000};
  for (unsigned long i = 0; i < count; i++) {
    int err = clock_nanosleep(CLOCK_MONOTONIC, 0, &wait, NULL);
    if (err) {
      fprintf(stderr, "short_sleeps: sleep %lu: %s\n", i, strerror(err));
      exit(1);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  unsigned long threads = 1;
  if (argc < 3 || argc > 4 || !parse(argv[1], &count) || !parse(argv[2], &micros) ||
      !micros || micros >= 1000000 || (argc == 4 && (!parse(argv[3], &threads) || !threads || threads > 64))) {
    fprintf(stderr, "usage: short_sleeps COUNT MICROSECONDS (1-999999) [THREADS (1-64)]\n");
    return 2;
  }
  pthread_t ids[64];
  for (unsigned long t = 1; t < threads; t++)
    if ((errno = pthread_create(&ids[t], NULL, sleeper, NULL)) != 0) {
      perror("short_sleeps: pthread_create");
      return 1;
    }
  sleeper(NULL);
  for (unsigned long t = 1; t < threads; t++)
    pthread_join(ids[t], NULL);
  return 0;
}
