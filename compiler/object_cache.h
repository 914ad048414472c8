// Compiled BPF objects on disk, keyed by (generated C, kernel BTF, engine
// version), so a script that did not change starts without Clang.
//
// moontrace may run as root, and loading an object runs its code in the
// kernel: the cache is trusted only when nobody but the effective user can
// change it (the directory is theirs, 0700, below directories only root or
// they can write; each object is theirs and not writable by others), and
// each object carries its key and a digest of its bytes, checked on load.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "compiler/cache_pruning.h"
#include "compiler/clang_compiler.h"

namespace mt {

class ObjectCache {
 public:
  // $MOONTRACE_CACHE, else $XDG_CACHE_HOME/moontrace, else .cache/moontrace
  // in the effective user's home from the password database (sudo may have
  // kept the invoking user's $HOME).
  static std::string default_directory();
  // SUFFIX: the file names' (".o" for objects). Each store keeps the
  // directory within BUDGET bytes (cache_pruning.h).
  explicit ObjectCache(std::string directory, std::string suffix = ".o",
                       uint64_t budget = kCacheBudgetBytes)
      : dir_(std::move(directory)), suffix_(std::move(suffix)), budget_(budget) {}

  // The key for a generated source on this kernel, compiled with `options`
  // (which programs' pointer reads are rewritten, and how).
  // COMPILER: the digest of the compiler library's sources (tests stand in
  // another build's).
  static std::string key_for(const std::string &c_source, const CompileOptions &options = {},
                             const std::string &compiler = compiler_sources_digest());
  // The same without the kernel: a package's objects, compiled from C
  // generated for the kernel they are run on (its structs' offsets in it).
  static std::string portable_key_for(const std::string &c_source,
                                      const CompileOptions &options = {});
  // The digest of the compiler library's sources this build was made from
  // (CMakeLists.txt).
  static const char *compiler_sources_digest();

  // The object stored for `key` (marked as used now), or nullopt when there
  // is none or it is damaged or another key's. Throws mt::Error (one line, with the fix)
  // when the directory or the object could have been changed by another
  // user.
  std::optional<std::vector<char>> load(const std::string &key) const;
  // Writes the object 0600 (temporary file, then rename), creating the
  // directory 0700, then prunes the directory (cache_pruning.h). Best effort: a cache that cannot
  // be written, or cannot be trusted, only costs time.
  void store(const std::string &key, const std::vector<char> &object) const;

  // What a stored object holds: a header with the key and digest, then the
  // object. Exposed for tests.
  static std::string encode(const std::string &key, const std::vector<char> &object);
  static std::optional<std::vector<char>> decode(const std::string &key, const std::string &bytes);

 private:
  // The directory opened after every check; an empty fd when it does not
  // exist. Throws mt::Error when it is not to be trusted.
  UniqueFd open_directory() const;

  std::string dir_;
  std::string suffix_;
  uint64_t budget_;
};

}  // namespace mt
