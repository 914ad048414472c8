// Stores and loads compiled objects in a private cache directory, checking key and digest.
#include "compiler/object_cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/embedded_files.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/sha256.h"
#include "common/trusted_path.h"
#include "common/write_all.h"
#include "compiler/cache_pruning.h"

namespace mt {

namespace {

// 2: keys and digests by SHA-256.
constexpr const char *kMagic = "moontrace object 2";

std::string digest(const char *data, size_t size) {
  return sha256_hex(std::string_view(data, size));
}

// What makes the same C compile to the same object anywhere: the C, the
// engine, how reads are rewritten, the headers.
template <class Hash>
Hash &add_portable_parts(Hash &hash, const std::string &c_source, const CompileOptions &options) {
  hash.add(c_source).add(MT_VERSION);
  for (const auto &[mode, functions] : {std::pair{"probe reads", &options.rewrite_functions},
                                        std::pair{"typed reads", &options.typed_read_functions}})
    for (const auto &function : *functions)
      hash.add(mode).add(function);
  for (const auto &header : kBpfHeaders)
    hash.add(header.name).add(header.content);
  return hash;
}

std::string home_of_effective_user() {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &found) == 0 && found && found->pw_dir[0])
    return found->pw_dir;
  return "/tmp/moontrace-" + std::to_string(geteuid());
}

// mkdir -p, every missing directory 0700.
void make_directories(const std::string &dir) {
  for (size_t pos = 0; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    mkdir(dir.substr(0, pos).c_str(), 0700);
  }
}

}  // namespace

std::string ObjectCache::default_directory() {
  if (const char *dir = std::getenv("MOONTRACE_CACHE"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/moontrace";
  return home_of_effective_user() + "/.cache/moontrace";
}

const char *ObjectCache::compiler_sources_digest() {
  return MT_COMPILER_SOURCES_DIGEST;
}

std::string ObjectCache::portable_key_for(const std::string &c_source,
                                          const CompileOptions &options) {
  ContentHash hash;  // in packages: stable across engines that read them
  return add_portable_parts(hash, c_source, options).hex();
}

std::string ObjectCache::key_for(const std::string &c_source, const CompileOptions &options,
                                 const std::string &compiler) {
  // The kernel's BTF changes with the kernel build; its size, time and the
  // kernel's version string identify it without reading megabytes. The
  // compiler library's sources too: its rewriter decides how the C reads
  // memory. (A package's object was compiled when it was packed: its key
  // needs neither.)
  struct utsname uts;
  uname(&uts);
  struct stat st {};
  stat("/sys/kernel/btf/vmlinux", &st);
  Sha256Parts hash;
  return add_portable_parts(hash, c_source, options)
      .add(uts.release)
      .add(uts.version)
      .add(std::to_string(st.st_size))
      .add(compiler)
      .hex();
}

std::string ObjectCache::encode(const std::string &key, const std::vector<char> &object) {
  std::string header = std::string(kMagic) + "\n" + key + "\n" +
                       digest(object.data(), object.size()) + "\n" + std::to_string(object.size()) +
                       "\n";
  return header + std::string(object.begin(), object.end());
}

std::optional<std::vector<char>> ObjectCache::decode(const std::string &key,
                                                     const std::string &bytes) {
  // Four header lines: magic, key, digest, size.
  size_t at = 0;
  std::string lines[4];
  for (auto &line : lines) {
    size_t end = bytes.find('\n', at);
    if (end == std::string::npos || end - at > 64)
      return std::nullopt;
    line = bytes.substr(at, end - at);
    at = end + 1;
  }
  if (lines[0] != kMagic || lines[1] != key || lines[3] != std::to_string(bytes.size() - at))
    return std::nullopt;
  if (lines[2] != digest(bytes.data() + at, bytes.size() - at))
    return std::nullopt;
  return std::vector<char>(bytes.begin() + static_cast<long>(at), bytes.end());
}

UniqueFd ObjectCache::open_directory() const {
  struct stat st;
  std::string verb = "use the object cache " + dir_;
  if (stat(dir_.c_str(), &st) != 0 && errno == ENOENT) {
    // Not made yet: where it would be made must be trusted all the same,
    // or the first run would store where the next one refuses to load.
    std::string above = dir_;
    do {
      size_t slash = above.find_last_of('/');
      above = slash == std::string::npos ? "." : slash == 0 ? "/" : above.substr(0, slash);
    } while (above != "/" && above != "." && stat(above.c_str(), &st) != 0);
    open_trusted_directory(above, {geteuid()}, verb, "the cache (MOONTRACE_CACHE)");
    return UniqueFd();
  }
  // The directory itself: the effective user's, and no one else's to
  // write, sticky or not (others could plant objects in a sticky one).
  auto check_own = [&](const struct stat &st) {
    if (st.st_uid != geteuid())
      refuse(verb, {dir_ + " belongs to another user (" + owner_and_mode(st) + ")",
                    "set MOONTRACE_CACHE to a directory of your own or run with --no-cache"});
    if (st.st_mode & (S_IWGRP | S_IWOTH))
      refuse(verb, {dir_ + " is writable by other users (" + owner_and_mode(st) + ")",
                    (st.st_mode & S_ISVTX ? "set MOONTRACE_CACHE to a directory of your own"
                                          : "chmod 700 " + dir_)});
  };
  if (S_ISDIR(st.st_mode))
    check_own(st);  // first, for its own message; again once opened
  UniqueFd dir = open_trusted_directory(dir_, {geteuid()}, verb, "the cache (MOONTRACE_CACHE)");
  if (fstat(dir.get(), &st) != 0)
    throw Error("cannot read " + dir_ + ": " + std::strerror(errno));
  check_own(st);
  return dir;
}

std::optional<std::vector<char>> ObjectCache::load(const std::string &key) const {
  UniqueFd dir = open_directory();
  if (!dir)
    return std::nullopt;
  std::string name = key + suffix_, path = dir_ + "/" + name;
  UniqueFd fd(openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd && errno == ENOENT)
    return std::nullopt;
  struct stat st;
  if (!fd && errno == ELOOP && fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    refuse("load the cached object " + path,
           {path + " is a symbolic link (" + owner_and_mode(st) + ")", "remove it"});
  if (!fd || fstat(fd.get(), &st) != 0)
    throw Error("cannot read " + path + ": " + std::strerror(errno));
  if (auto why = distrust_file(path, st, {geteuid()})) {
    why->fix = "remove it (it is compiled again)";
    refuse("load the cached object " + path, *why);
  }
  fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  auto object = decode(key, read_whole_file(fd.get(), path));
  if (object)
    mark_cache_entry_used(fd.get());  // what pruning keeps longest (cache_pruning.h)
  return object;
}

void ObjectCache::store(const std::string &key, const std::vector<char> &object) const {
  UniqueFd dir;
  try {
    // Made only below a directory found trusted: never through a link
    // or in a directory another user could change.
    dir = open_directory();
    if (!dir) {
      make_directories(dir_);
      dir = open_directory();
    }
  } catch (const Error &) {
    return;  // refused when loading; with --no-cache, quietly not stored
  }
  if (!dir)
    return;
  // A name of our own, then rename: a reader never sees half an object.
  std::string tmp = key + ".tmp." + std::to_string(getpid());
  UniqueFd fd(
      openat(dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd)
    return;
  bool ok = fchmod(fd.get(), 0600) == 0 && write_all(fd.get(), encode(key, object));
  ok &= close(fd.release()) == 0;
  if (!ok || renameat(dir.get(), tmp.c_str(), dir.get(), (key + suffix_).c_str()) != 0)
    unlinkat(dir.get(), tmp.c_str(), 0);
  else
    prune_cache(dir.get(), budget_, key + suffix_);
}

}  // namespace mt
