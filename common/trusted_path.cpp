// Opens files only after checking the owner and mode of every directory on the path.
#include "common/trusted_path.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace mt {

namespace {

bool trusted(uid_t uid, const std::vector<uid_t> &owners) {
  return std::find(owners.begin(), owners.end(), uid) != owners.end();
}

bool writable_by_others(const struct stat &st) {
  return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

[[noreturn]] void cannot_read(const std::string &path) {
  throw Error("cannot read " + path + ": " + std::strerror(errno));
}

std::optional<uid_t> number_from_env(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return std::nullopt;
  char *end;
  unsigned long n = std::strtoul(text, &end, 10);
  if (*end || n >= UINT_MAX)
    return std::nullopt;
  return static_cast<uid_t>(n);
}

}  // namespace

std::optional<std::pair<uid_t, gid_t>> sudo_user() {
  // SUDO_UID is only an environment variable: believed only from root,
  // whom sudo made so (anyone else could set it to borrow another's trust).
  if (geteuid() != 0)
    return std::nullopt;
  auto uid = number_from_env("SUDO_UID"), gid = number_from_env("SUDO_GID");
  if (!uid || !gid || *uid == 0)
    return std::nullopt;
  return std::pair<uid_t, gid_t>(*uid, *gid);
}

std::vector<uid_t> script_owners() {
  std::vector<uid_t> owners = {0};
  if (geteuid() != 0)
    owners.push_back(geteuid());
  if (auto sudo = sudo_user())
    owners.push_back(sudo->first);
  return owners;
}

std::string user_name(uid_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found)
    return found->pw_name;
  return std::to_string(uid);
}

std::string owner_and_mode(const struct stat &st) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  std::string owner = "owner ";
  if (getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &found) == 0 && found)
    owner += std::string(found->pw_name) + " ";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return owner + "uid " + std::to_string(st.st_uid) + ", mode " + mode;
}

std::optional<Distrust> distrust_directory(const std::string &path, const struct stat &st,
                                           const std::vector<uid_t> &owners,
                                           const std::string &moved) {
  if (st.st_uid != 0 && !trusted(st.st_uid, owners))
    return Distrust{path + " belongs to another user (" + owner_and_mode(st) + ")",
                    "chown " + user_name(geteuid()) + " " + path + " or move " + moved};
  if (writable_by_others(st) && !(st.st_mode & S_ISVTX))
    return Distrust{path + " is writable by other users (" + owner_and_mode(st) + ")",
                    "chmod go-w " + path + " or move " + moved};
  return std::nullopt;
}

std::optional<Distrust> distrust_file(const std::string &path, const struct stat &st,
                                      const std::vector<uid_t> &owners) {
  if (S_ISDIR(st.st_mode))
    return Distrust{path + " is a directory", "name a file"};
  if (!S_ISREG(st.st_mode))
    return Distrust{path + " is not a regular file (" + owner_and_mode(st) + ")",
                    "name a regular file"};
  if (!trusted(st.st_uid, owners))
    return Distrust{path + " belongs to another user (" + owner_and_mode(st) + ")",
                    "chown " + user_name(geteuid()) + " " + path + " or use a copy of your own"};
  if (writable_by_others(st))
    return Distrust{path + " is writable by other users (" + owner_and_mode(st) + ")",
                    "chmod go-w " + path};
  return std::nullopt;
}

void refuse(const std::string &verb_and_subject, const Distrust &why) {
  throw Error("refusing to " + verb_and_subject + ": " + why.what + "; " + why.fix);
}

namespace {

// Refuses PATH when the way to it, as written, passes a directory or a
// symbolic link that others could change: a link is followed only out of
// a directory already found trustworthy, and only when it belongs to root
// or one of OWNERS (else another user chose where it leads). What it leads
// to is then walked the same way.
void check_path_as_written(const std::string &path, const std::vector<uid_t> &owners,
                           const std::string &verb_and_subject, const std::string &moved) {
  std::vector<std::string> ahead;  // components still to walk, next last
  auto push = [&](const std::string &p) {
    std::vector<std::string> parts;
    for (size_t start = 0; start <= p.size();) {
      size_t slash = std::min(p.find('/', start), p.size());
      if (slash > start)
        parts.push_back(p.substr(start, slash - start));
      start = slash + 1;
    }
    ahead.insert(ahead.end(), parts.rbegin(), parts.rend());
  };
  if (path.empty() || path[0] != '/') {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
      cannot_read(path);
    push(path);
    push(cwd);  // walked first
  } else {
    push(path);
  }
  std::string current;  // the directory walked to, "" for /
  for (int links = 0; !ahead.empty();) {
    std::string name = ahead.back();
    ahead.pop_back();
    if (name == ".")
      continue;
    if (name == "..") {
      current = current.substr(0, current.rfind('/'));
      continue;
    }
    std::string next = current + "/" + name;
    struct stat st;
    if (lstat(next.c_str(), &st) != 0)
      cannot_read(path);
    if (S_ISLNK(st.st_mode)) {
      if (st.st_uid != 0 && !trusted(st.st_uid, owners))
        refuse(verb_and_subject,
               {next + " is a symbolic link of another user (" + owner_and_mode(st) + ")",
                "name what it leads to, or move " + moved});
      char target[PATH_MAX];
      ssize_t n = readlink(next.c_str(), target, sizeof target - 1);
      if (n < 0 || ++links > 40)
        cannot_read(path);
      std::string to(target, static_cast<size_t>(n));
      if (to[0] == '/')
        current.clear();
      push(to);
      continue;
    }
    if (!ahead.empty()) {
      if (auto why = distrust_directory(next, st, owners, moved))
        refuse(verb_and_subject, *why);
    }
    current = next;
  }
}

}  // namespace

UniqueFd open_trusted_directory(const std::string &path, const std::vector<uid_t> &owners,
                                const std::string &verb_and_subject, const std::string &moved) {
  check_path_as_written(path + "/.", owners, verb_and_subject, moved);
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved))
    cannot_read(path);
  std::string real = resolved;
  UniqueFd dir(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string walked = "/";
  if (!dir)
    cannot_read(walked);
  for (size_t start = 1;;) {
    struct stat st;
    if (fstat(dir.get(), &st) != 0)
      cannot_read(walked);
    if (auto why = distrust_directory(walked, st, owners, moved))
      refuse(verb_and_subject, *why);
    if (start >= real.size())
      return dir;
    size_t slash = real.find('/', start);
    if (slash == std::string::npos)
      slash = real.size();
    std::string name = real.substr(start, slash - start);
    walked = real.substr(0, slash);
    int next = openat(dir.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int error = errno;
    dir.reset(next);
    if (!dir) {
      errno = error;
      cannot_read(walked);
    }
    start = slash + 1;
  }
}

UniqueFd open_trusted_file(const std::string &path, const std::vector<uid_t> &owners) {
  std::string verb = "load " + path;
  check_path_as_written(path, owners, verb, "the file");
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved))
    cannot_read(path);
  std::string real = resolved;
  size_t slash = real.rfind('/');
  UniqueFd dir = open_trusted_directory(slash == 0 ? "/" : real.substr(0, slash), owners, verb);
  // O_NONBLOCK: a FIFO must not hang the open before it is refused.
  UniqueFd fd(
      openat(dir.get(), real.c_str() + slash + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd)
    cannot_read(path);
  struct stat st;
  if (fstat(fd.get(), &st) != 0)
    cannot_read(path);
  if (auto why = distrust_file(real, st, owners))
    refuse(verb, *why);
  fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_whole_file(int fd, const std::string &path) {
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      cannot_read(path);
    if (n == 0)
      return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace mt
