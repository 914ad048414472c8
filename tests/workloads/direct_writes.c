/* Writes COUNT blocks of SIZE bytes with O_DIRECT, for block-layer tests
 * that need a known number of write requests from a known pid.
 *
 * usage: direct_writes DEV COUNT SIZE
 *
 * Guarantee: DEV is opened once with O_WRONLY | O_DIRECT and gets exactly
 * COUNT pwrite(2) calls of SIZE bytes (a multiple of 512, at most 64 MiB)
 * from one page-aligned buffer, one after the other, at offsets 0, SIZE,
 * 2*SIZE, ... wrapping to 0 at the end of a block device. Nothing else
 * touches DEV: no reads, no fsync (it would add a flush request). Each
 * pwrite must write all SIZE bytes, else it prints why on stderr and exits
 * 1. With O_DIRECT each pwrite is one bio; whether the block layer splits
 * it into several requests depends on the queue limits (max_sectors_kb,
 * max_segments) and merging on queue/nomerges. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(const char *text, unsigned long long *out) {
  char *end;
  errno = 0;
  *out = strtoull(text, &end, 0);
  return errno == 0 && isdigit((unsigned char)text[0]) && *end == '\0';
}

int main(int argc, char **argv) {
  unsigned long long count, size;
  if (argc != 4 || !parse(argv[2], &count) || !parse(argv[3], &size) || size == 0 ||
      size % 512 != 0 || size > (64ull << 20)) {
    fprintf(stderr, "usage: direct_writes DEV COUNT SIZE (SIZE a multiple of 512, <= 64 MiB)\n");
    return 2;
  }
  int fd = open(argv[1], O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "direct_writes: open %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  /* Wrap at the end of a block device; a regular file just grows. */
  unsigned long long span = 0;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) {
    unsigned long long bytes = 0;
    if (ioctl(fd, BLKGETSIZE64, &bytes) != 0 || bytes < size) {
      fprintf(stderr, "direct_writes: %s holds %llu bytes, fewer than SIZE %llu\n", argv[1], bytes,
              size);
      return 1;
    }
    span = bytes / size * size;
  }
  void *buf;
  if (posix_memalign(&buf, 4096, size) != 0) {
    fprintf(stderr, "direct_writes: out of memory\n");
    return 1;
  }
  memset(buf, 0xd1, size);
  for (unsigned long long i = 0; i < count; i++) {
    unsigned long long offset = i * size;
    if (span)
      offset %= span;
    ssize_t n = pwrite(fd, buf, size, (off_t)offset);
    if (n != (ssize_t)size) {
      fprintf(stderr, "direct_writes: write %llu at %llu: %s\n", i + 1, offset,
              n < 0 ? strerror(errno) : "short write");
      return 1;
    }
  }
  close(fd);
  free(buf);
  return 0;
}
