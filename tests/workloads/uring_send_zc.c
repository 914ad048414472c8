/* Zero-copy sends (IORING_OP_SEND_ZC), which complete twice: their result
 * (with IORING_CQE_F_MORE), then a notification once the kernel let go of
 * the buffer (IORING_CQE_F_NOTIF), for tests of uring.lua.
 *
 * usage: uring_send_zc N [serial]   (1 <= N <= 16)
 *
 * N sends of 4 KiB over a TCP connection on the loopback, in one
 * io_uring_enter, then their 2 * N completions reaped; with `serial`, one
 * send per io_uring_enter, each submitted once the one before posted its
 * result (so that it may take the address of the freed send), all with
 * user_data 1, the notifications reaped as they come. Exits 0 when each
 * send posted its result and its notification, 1 (saying why on stderr)
 * otherwise, 2 on bad arguments, 77 where the kernel has no SEND_ZC. */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(const char *what, int got, int want) {
  fprintf(stderr, "uring_send_zc: %s: got %d, want %d\n", what, got, want);
  return 1;
}

int main(int argc, char **argv) {
  bool serial = argc == 3 && strcmp(argv[2], "serial") == 0;
  int n = argc == 2 || serial ? atoi(argv[1]) : 0;
  if (n < 1 || n > 16) {
    fprintf(stderr, "usage: uring_send_zc N(1-16) [serial]\n");
    return 2;
  }
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t size = sizeof(at);
  int listener = socket(AF_INET, SOCK_STREAM, 0), sender = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0 || sender < 0 || bind(listener, (struct sockaddr *)&at, sizeof(at)) ||
      listen(listener, 1) || getsockname(listener, (struct sockaddr *)&at, &size) ||
      connect(sender, (struct sockaddr *)&at, sizeof(at)) || accept(listener, NULL, NULL) < 0)
    return fail("a loopback connection", -1, 0);
  struct io_uring ring;
  int err = io_uring_queue_init(2 * 16, &ring, 0);
  if (err < 0)
    return fail("io_uring_queue_init", err, 0);
  static char buffer[4096];
  int results = 0, notes = 0, sent = 0;
  while (results + notes < 2 * n) {
    if (sent < n && (!serial || sent == results)) {
      int now = serial ? 1 : n;
      for (int i = 0; i < now; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        io_uring_prep_send_zc(sqe, sender, buffer, sizeof(buffer), 0, 0);
        sqe->user_data = serial ? 1 : (unsigned long long)i + 1;
      }
      if ((err = io_uring_submit(&ring)) != now)
        return fail("sends submitted", err, now);
      sent += now;
    }
    struct io_uring_cqe *cqe;
    if ((err = io_uring_wait_cqe(&ring, &cqe)) < 0)
      return fail("io_uring_wait_cqe", err, 0);
    if (cqe->res == -EINVAL && results == 0) {
      fprintf(stderr, "uring_send_zc: this kernel has no zero-copy sends\n");
      return 77;
    }
    if (cqe->flags & IORING_CQE_F_NOTIF)
      notes++;
    else if (cqe->res == (int)sizeof(buffer) && (cqe->flags & IORING_CQE_F_MORE))
      results++;
    else
      return fail("a send's result", cqe->res, (int)sizeof(buffer));
    io_uring_cqe_seen(&ring, cqe);
  }
  io_uring_queue_exit(&ring);
  return results == n && notes == n ? 0 : fail("notifications", notes, n);
}
