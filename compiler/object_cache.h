// Compiled BPF objects on disk, keyed by (generated C, kernel BTF, engine
// version), so a script that did not change starts without Clang.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace mt {

class ObjectCache {
 public:
  // $MOONTRACE_CACHE, else $XDG_CACHE_HOME/moontrace, else ~/.cache/moontrace.
  static std::string default_directory();
  explicit ObjectCache(std::string directory) : dir_(std::move(directory)) {}

  // The key for a generated source on this kernel.
  static std::string key_for(const std::string &c_source);

  std::optional<std::vector<char>> load(const std::string &key) const;
  // Best effort: a cache that cannot be written only costs time.
  void store(const std::string &key, const std::vector<char> &object) const;

 private:
  std::string dir_;
};

}  // namespace mt
