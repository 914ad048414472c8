// Resolves output paths safely, writes via a temporary file and renames it on commit.
#include "output/output_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

#include "common/error.h"
#include "common/trusted_path.h"
#include "common/write_all.h"

namespace mt {

namespace {

constexpr int kMaxLinks = 16;

[[noreturn]] void cannot_write(const std::string &path, int error = errno) {
  throw Error("cannot write " + path + ": " + std::strerror(error));
}

std::string directory_of(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A name a script may give without --unsafe: a file in the working
// directory.
bool plain_name(const std::string &name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// What the path names once the links that may be followed are: a file to
// replace (new or regular), or one to write directly (a device, a FIFO, or
// what a /proc link stands for, such as the pipe behind /dev/stdout).
struct Target {
  std::string path;
  bool direct = false;
  bool open_file = false;  // a /proc link to a file already open: followed
  struct stat st {};       // what lstat() found there, when direct
};

// A link is followed only if someone trusted made it where nobody else can
// change it: a sticky directory (/tmp) keeps others from replacing it.
void check_link(const std::string &asked, const std::string &link, const struct stat &st) {
  auto owners = script_owners();
  std::string verb = "write " + asked;
  bool owned = false;
  for (uid_t uid : owners)
    owned |= st.st_uid == uid;
  if (!owned)
    refuse(verb, {link + " is a symbolic link made by another user (" + owner_and_mode(st) + ")",
                  "remove it or give another name"});
  std::string dir = directory_of(link);
  struct stat dir_st;
  if (stat(dir.c_str(), &dir_st) != 0)
    cannot_write(asked);
  if (auto why = distrust_directory(dir, dir_st, owners))
    refuse(verb, {link + " is a symbolic link, and " + why->what,
                  "remove the link or name the file it points to"});
}

// NAME in DIR ("" the working directory) as a path.
std::string joined(const std::string &dir, const std::string &name) {
  return dir.empty() ? name : dir.back() == '/' ? dir + name : dir + "/" + name;
}

// Pushes PATH's parts onto PARTS, its first part last: walked next.
void push_parts(const std::string &path, std::vector<std::string> &parts) {
  std::vector<std::string> in_order;
  size_t start = 0;
  for (size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1)
    in_order.push_back(path.substr(start, slash - start));
  in_order.push_back(path.substr(start));
  parts.insert(parts.end(), in_order.rbegin(), in_order.rend());
}

// DIR with every symbolic link on its way replaced by where it leads, each
// checked as the last part's are (check_link): a link another user made in
// /tmp to a directory of root's is not followed. No link is then left to
// follow, and one swapped in later is refused (open_directory).
std::string resolve_directory(const std::string &asked, const std::string &dir, int &hops) {
  std::string resolved = dir[0] == '/' ? "/" : "";  // "": the working directory
  std::vector<std::string> parts;
  push_parts(dir, parts);
  while (!parts.empty()) {
    std::string part = std::move(parts.back());
    parts.pop_back();
    if (part.empty() || part == ".")
      continue;
    std::string next = joined(resolved, part);
    struct stat st;
    if (lstat(next.c_str(), &st) != 0)
      cannot_write(asked);
    if (!S_ISLNK(st.st_mode)) {
      resolved = next;
      continue;
    }
    check_link(asked, next, st);
    char target[PATH_MAX];
    ssize_t n = readlink(next.c_str(), target, sizeof target - 1);
    if (n < 0 || ++hops >= kMaxLinks)
      cannot_write(asked, n < 0 ? errno : ELOOP);
    target[n] = 0;
    if (target[0] == '/')
      resolved = "/";
    push_parts(target, parts);
  }
  return resolved;
}

Target resolve_command_line_name(const std::string &path) {
  std::string current = path;
  for (int hops = 0; hops < kMaxLinks; hops++) {
    current = joined(resolve_directory(path, directory_of(current), hops), base_of(current));
    struct stat st;
    if (lstat(current.c_str(), &st) != 0) {
      if (errno == ENOENT)
        return {current};
      cannot_write(path);
    }
    if (S_ISDIR(st.st_mode))
      cannot_write(path, EISDIR);
    if (!S_ISLNK(st.st_mode))
      return {current, !S_ISREG(st.st_mode), false, st};
    check_link(path, current, st);
    // The kernel's own links (/dev/stdout leads to /proc/self/fd/1) name
    // open files, not paths to replace.
    char dir[PATH_MAX];
    if (realpath(directory_of(current).c_str(), dir) && std::string(dir).rfind("/proc/", 0) == 0)
      return {current, true, true};
    char target[PATH_MAX];
    ssize_t n = readlink(current.c_str(), target, sizeof target - 1);
    if (n < 0)
      cannot_write(path);
    target[n] = 0;
    current = target[0] == '/' ? target : directory_of(current) + "/" + target;
  }
  cannot_write(path, ELOOP);
}

// A script's name: nothing on its way is followed (openat2 refuses links
// in the directories; the last part is checked with lstat).
Target resolve_script_name(const std::string &path, const UniqueFd &dir) {
  struct stat st;
  std::string name = base_of(path);
  if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT)
      return {path};
    cannot_write(path);
  }
  if (S_ISLNK(st.st_mode))
    refuse("write " + path, {path + " is a symbolic link (" + owner_and_mode(st) + ")",
                             "remove it, or name the trace with -o"});
  if (S_ISDIR(st.st_mode))
    cannot_write(path, EISDIR);
  return {path, !S_ISREG(st.st_mode), false, st};
}

// DIR, refused when a symbolic link is on its way.
UniqueFd open_directory(const std::string &dir, const std::string &path) {
  struct open_how how {};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS;
  UniqueFd fd(static_cast<int>(syscall(SYS_openat2, AT_FDCWD, dir.c_str(), &how, sizeof how)));
  if (!fd && errno == ELOOP)
    refuse("write " + path,
           {dir + " is reached through a symbolic link", "name the trace with -o"});
  if (!fd)
    cannot_write(path);
  return fd;
}

std::string random_suffix() {
  unsigned char bytes[6];
  if (getrandom(bytes, sizeof bytes, 0) != sizeof bytes) {
    uint64_t fallback = static_cast<uint64_t>(getpid()) * 2654435761u ^ uint64_t(time(nullptr));
    std::memcpy(bytes, &fallback, sizeof bytes);  // O_EXCL still guards
  }
  static const char kDigits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (unsigned char b : bytes)
    s += kDigits[b % 36];
  return s;
}

// Under sudo, a file in a directory of the invoking user is theirs.
void give_to_sudo_user(int fd, int dir) {
  auto sudo = sudo_user();
  struct stat st;
  if (sudo && fstat(dir, &st) == 0 && st.st_uid == sudo->first)
    (void)fchown(fd, sudo->first, sudo->second);
}

}  // namespace

OutputFile OutputFile::open(const std::string &path, Origin origin, bool unsafe,
                            const ScriptLocation &where) {
  bool from_script = origin == Origin::Script;
  if (from_script && !unsafe && !plain_name(path))
    throw Error("fxt{file = \"" + path +
                    "\"}: a script may only name a file in the working directory; give -o FILE "
                    "or run with --unsafe",
                where);
  OutputFile out;
  out.path_ = path;
  try {
    std::string base = base_of(path);
    if (base.empty() || base == "." || base == "..")
      cannot_write(path.empty() ? "''" : path, path.empty() ? ENOENT : EISDIR);
    Target target;
    if (from_script) {
      out.dir_ = open_directory(directory_of(path), path);
      target = resolve_script_name(path, out.dir_);
    } else {
      target = resolve_command_line_name(path);
    }
    if (target.direct) {
      // A FIFO or device found by name must be someone trusted's (another
      // user's FIFO in /tmp would read the trace), checked before opening
      // it (which waits for a FIFO's reader) and compared after; a /proc
      // link is a file the user handed over already open. O_APPEND: the
      // file behind such a link (stdout sent to a file with >>) is added
      // to, not overwritten from its start.
      int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_APPEND;
      if (target.open_file) {
        out.fd_.reset(::open(target.path.c_str(), flags));
      } else {
        bool owned = false;
        for (uid_t uid : script_owners())
          owned |= target.st.st_uid == uid;
        if (!owned && !S_ISCHR(target.st.st_mode))
          refuse("write " + path,
                 {target.path + " belongs to another user (" + owner_and_mode(target.st) + ")",
                  "remove it or give another name"});
        out.fd_.reset(openat(out.dir_ ? out.dir_.get() : AT_FDCWD,
                             (out.dir_ ? base_of(target.path) : target.path).c_str(),
                             flags | O_NOFOLLOW));
      }
      struct stat st;
      if (!out.fd_ || fstat(out.fd_.get(), &st) != 0)
        cannot_write(path);
      if (!target.open_file && (st.st_dev != target.st.st_dev || st.st_ino != target.st.st_ino))
        cannot_write(path, EAGAIN);  // replaced while it was opened
      return out;
    }
    if (!from_script)
      out.dir_ = open_directory(directory_of(target.path), path);
    out.target_name_ = base_of(target.path);
    for (int attempt = 0; !out.fd_; attempt++) {
      std::string temp = "." + out.target_name_ + ".tmp-" + random_suffix();
      out.fd_.reset(openat(out.dir_.get(), temp.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (out.fd_)
        out.temp_name_ = temp;
      else if (errno != EEXIST || attempt == 100)
        cannot_write(path);
    }
    if (fchmod(out.fd_.get(), 0600) != 0)
      cannot_write(path);
    give_to_sudo_user(out.fd_.get(), out.dir_.get());
  } catch (Error &e) {
    if (from_script && e.where.file.empty())
      e.where = where;
    throw;
  }
  return out;
}

OutputFile::~OutputFile() {
  if (!temp_name_.empty() && dir_)
    unlinkat(dir_.get(), temp_name_.c_str(), 0);
  if (!earlier_name_.empty() && dir_)
    unlinkat(dir_.get(), earlier_name_.c_str(), 0);
}

// A stream's writes go out through write_output: a stalled reader is given
// up at a stop.
ssize_t write_to_fd(void *fd, const char *data, size_t size) {
  return static_cast<ssize_t>(
      write_output(static_cast<int>(reinterpret_cast<intptr_t>(fd)), data, size));
}

int close_fd(void *fd) {
  return ::close(static_cast<int>(reinterpret_cast<intptr_t>(fd))) == 0 || errno == EINTR ? 0 : EOF;
}

std::FILE *OutputFile::stream() const {
  int copy = fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
  cookie_io_functions_t io{nullptr, write_to_fd, nullptr, close_fd};
  std::FILE *f =
      copy < 0 ? nullptr : fopencookie(reinterpret_cast<void *>(intptr_t(copy)), "w", io);
  if (!f) {
    int saved = errno;
    if (copy >= 0)
      ::close(copy);
    cannot_write(path_, saved);
  }
  std::setvbuf(f, nullptr, _IONBF, 0);
  return f;
}

int OutputFile::close() {
  if (!fd_)
    return 0;
  // EINTR: the file is closed all the same (Linux), and nothing was lost.
  return ::close(fd_.release()) == 0 || errno == EINTR ? 0 : errno;
}

void OutputFile::commit() {
  if (temp_name_.empty())
    return;
  // Best effort: where the filesystem has no hard links, none is kept.
  std::string earlier = "." + target_name_ + ".earlier-" + random_suffix();
  if (linkat(dir_.get(), target_name_.c_str(), dir_.get(), earlier.c_str(), 0) == 0)
    earlier_name_ = earlier;
  if (renameat(dir_.get(), temp_name_.c_str(), dir_.get(), target_name_.c_str()) != 0)
    cannot_write(path_);
  temp_name_.clear();
}

void OutputFile::settle(bool written) {
  if (earlier_name_.empty())
    return;
  if (written)
    unlinkat(dir_.get(), earlier_name_.c_str(), 0);
  else
    renameat(dir_.get(), earlier_name_.c_str(), dir_.get(), target_name_.c_str());
  earlier_name_.clear();
}

}  // namespace mt
