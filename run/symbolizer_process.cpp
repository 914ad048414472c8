// Forks the symbolizing child, drops its privileges, and talks to it over a
// socket pair: a request is the binary's descriptor and the addresses, an
// answer the names.
#include "run/symbolizer_process.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "common/error.h"
#include "common/field_codec.h"
#include "compiler/clang_compiler.h"

// Built with AddressSanitizer (GCC says so one way, Clang another).
#if defined(__SANITIZE_ADDRESS__)
#define MT_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef MT_ADDRESS_SANITIZER
#define MT_ADDRESS_SANITIZER 0
#endif

namespace mt {

namespace {

constexpr uid_t kNobody = 65534;
constexpr uint32_t kMaxMessage = 64 << 20;

// A message: its length (4 bytes) then its bytes; with a descriptor
// alongside when `fd` >= 0.
bool send_message(int socket, const std::string &bytes, int fd = -1) {
  std::string framed(4, '\0');
  uint32_t n = static_cast<uint32_t>(bytes.size());
  std::memcpy(framed.data(), &n, 4);
  framed += bytes;
  struct iovec iov = {framed.data(), framed.size()};
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  ssize_t sent;
  while ((sent = sendmsg(socket, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (sent < 0)
    return false;
  // The rest, if the socket took only part (the descriptor went with the first).
  for (size_t at = static_cast<size_t>(sent); at < framed.size();) {
    ssize_t more = send(socket, framed.data() + at, framed.size() - at, MSG_NOSIGNAL);
    if (more < 0 && errno == EINTR)
      continue;
    if (more <= 0)
      return false;
    at += static_cast<size_t>(more);
  }
  return true;
}

// Waits until `socket` is readable or `deadline` passes.
bool readable(int socket, std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  struct pollfd p = {socket, POLLIN, 0};
  int n;
  while ((n = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())))) < 0 &&
         errno == EINTR)
    left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  return n == 1;
}

// A message, and the descriptor that came with it (if any) into `fd`.
std::optional<std::string> receive_message(
    int socket, UniqueFd *fd,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  std::string bytes;
  size_t want = 4;
  while (bytes.size() < want) {
    if (deadline != std::chrono::steady_clock::time_point::max() && !readable(socket, deadline))
      return std::nullopt;
    char buffer[65536];
    struct iovec iov = {buffer, std::min(sizeof buffer, want - bytes.size())};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return std::nullopt;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int received;
        std::memcpy(&received, CMSG_DATA(c), sizeof(int));
        if (fd)
          fd->reset(received);
        else
          close(received);
      }
    bytes.append(buffer, static_cast<size_t>(n));
    if (want == 4 && bytes.size() >= 4) {
      uint32_t length;
      std::memcpy(&length, bytes.data(), 4);
      if (length > kMaxMessage)
        return std::nullopt;
      want = 4 + length;
    }
  }
  return bytes.substr(4);
}

}  // namespace

// Gives up every privilege for good: root's uid, groups and capabilities,
// or, run without root, the capabilities it was given.
bool drop_privileges() {
  if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setresgid(kNobody, kNobody, kNobody) != 0 ||
                         setresuid(kNobody, kNobody, kNobody) != 0))
    return false;
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct none[2] = {};
  return syscall(SYS_capset, &header, none) == 0 &&
         prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0 &&
         prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
}

// The child: in an empty, deleted root directory, as nobody with no
// capabilities, it answers requests until the run closes its end.
void serve_symbolizer_child(const char *empty_root) {
  constexpr int socket = 3;
  struct stat st {};
  if (fstat(socket, &st) != 0 || !S_ISSOCK(st.st_mode))
    _exit(2);  // not started by a run
  try {
    load_compiler_library();  // while it may still read the engine's files
  } catch (const Error &) {
    _exit(1);  // no compiler library: the run goes on without names
  }
  // Nothing a binary names (split DWARF's files) can be opened from here.
  if (chroot(empty_root) != 0 || chdir("/") != 0 || !drop_privileges())
    _exit(1);
    // DWARF of a big binary fits. (AddressSanitizer maps far more, lazily.)
#if !MT_ADDRESS_SANITIZER
  struct rlimit memory = {4ull << 30, 4ull << 30};
  setrlimit(RLIMIT_DATA, &memory);
#endif
  if (!send_message(socket, "ready"))
    _exit(0);
  for (;;) {
    UniqueFd fd;  // the binary, once read by LLVM no longer needed
    auto request = receive_message(socket, &fd);
    if (!request)
      _exit(0);
    std::string answer;
    try {
      FieldReader in(*request);
      std::string key = in.str();
      std::vector<uint64_t> addresses;
      for (int64_t n = in.num(); n > 0; n--)
        addresses.push_back(static_cast<uint64_t>(in.num()));
      FieldWriter out;
      for (const auto &names : symbolize_code(fd ? fd.get() : -1, key, addresses))
        out.strs(names);
      answer = out.bytes();
    } catch (const Error &) {
      _exit(1);  // a garbled request
    }
    if (!send_message(socket, answer))
      _exit(0);
  }
}

SymbolizerProcess::~SymbolizerProcess() {
  stop();
}

void SymbolizerProcess::stop() {
  socket_.reset();
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (!empty_root_.empty()) {
    rmdir(empty_root_.c_str());
    empty_root_.clear();
  }
}

bool SymbolizerProcess::start() {
  // The child's root: a directory of root's, empty, removed once the child
  // is in it.
  char root[] = "/tmp/moontrace-symbolizer-XXXXXX";
  if (!mkdtemp(root))
    return false;
  empty_root_ = root;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return false;
  // Prepared before fork: between fork and exec only async-signal-safe calls.
  const char *argv[] = {"moontrace", kSymbolizerChildArgument, root, nullptr};
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(pair[0]);
    close(pair[1]);
    return false;
  }
  if (pid == 0) {
    // Out of the terminal's process group (a Ctrl-C is the run's to handle),
    // gone with the run.
    setsid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
      _exit(127);
    // The socket as descriptor 3, kept across exec; the rest closed.
    if (pair[1] == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(pair[1], 3) < 0)
      _exit(127);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
      _exit(127);
    if (close_range(4, ~0U, 0) != 0)
      for (int fd = 4; fd < 65536; fd++)
        close(fd);
    execv("/proc/self/exe", const_cast<char **>(argv));
    _exit(127);
  }
  close(pair[1]);
  pid_ = pid;
  socket_.reset(pair[0]);
  ready_ = false;
  return true;
}

bool SymbolizerProcess::wait_ready() {
  // Ready once it is in its root and has given up its privileges.
  auto ready = receive_message(socket_.get(), nullptr,
                               std::chrono::steady_clock::now() + std::chrono::seconds(30));
  rmdir(empty_root_.c_str());
  empty_root_.clear();
  return ready_ = ready && *ready == "ready";
}

void SymbolizerProcess::launch() {
  if (pid_ < 0 && starts_ < kMaxStarts && start())
    starts_++;
}

std::optional<std::vector<std::vector<std::string>>> SymbolizerProcess::symbolize(
    int fd, const std::string &key, const std::vector<uint64_t> &addresses,
    std::chrono::milliseconds limit) {
  if (failed_keys_.count(key))
    return std::nullopt;
  if (pid_ < 0)
    launch();  // a child that failed is started again, a few times in a run
  if (pid_ < 0)
    return std::nullopt;
  if (!ready_ && !wait_ready()) {
    stop();
    starts_ = kMaxStarts;  // it cannot start here (no compiler library, no /tmp)
    warn("cannot name user stack frames: the symbolizer did not start");
    return std::nullopt;
  }
  FieldWriter request;
  request.str(key).num(static_cast<int64_t>(addresses.size()));
  for (uint64_t a : addresses)
    request.num(static_cast<int64_t>(a));
  std::optional<std::string> answer;
  if (send_message(socket_.get(), request.bytes(), fd))
    answer = receive_message(socket_.get(), nullptr, std::chrono::steady_clock::now() + limit);
  try {
    if (answer) {
      std::vector<std::vector<std::string>> frames;
      FieldReader in(*answer);
      for (size_t i = 0; i < addresses.size(); i++)
        frames.push_back(in.strs());
      return frames;
    }
  } catch (const Error &) {
  }
  // Died, hung or garbled on this binary: it is not asked again.
  failed_keys_.insert(key);
  stop();
  warn("cannot name the frames of a binary (build id " + key + "): the symbolizer failed on it");
  return std::nullopt;
}

void SymbolizerProcess::warn(const std::string &what) {
  if (!warned_)
    std::fprintf(stderr, "moontrace: %s\n", what.c_str());
  warned_ = true;
}

}  // namespace mt
