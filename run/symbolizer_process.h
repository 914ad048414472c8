// Names functions in binaries from a child process that runs as nobody.
// The binaries are other users' files and LLVM's symbolizer parses them
// (their DWARF may name more files to open): as root that would read and
// follow what another user wrote, and a malformed file could crash or hang
// the tracer. The child gets each binary as a descriptor the run opened
// and checked, answers within a time limit, and a child that dies or
// hangs only costs the names.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace mt {

// The child is this executable run again with this argument and an empty
// directory to make its root, and its socket as descriptor 3: a fresh
// process, so that nothing of the run (its other threads' locks, its
// descriptors) goes with it, in its own session (a Ctrl-C is the run's).
inline constexpr const char *kSymbolizerChildArgument = "--symbolizer-child";
// Serves requests on descriptor 3 until the run closes it; never returns.
[[noreturn]] void serve_symbolizer_child(const char *empty_root);

class SymbolizerProcess {
 public:
  SymbolizerProcess() = default;
  ~SymbolizerProcess();  // ends the child
  SymbolizerProcess(const SymbolizerProcess &) = delete;
  SymbolizerProcess &operator=(const SymbolizerProcess &) = delete;

  // Starts the child now (it loads LLVM meanwhile), not at the first call.
  void launch();

  // Per address of the binary open at `fd` (`key` names it for the child's
  // cache: its build id), the functions holding it, innermost first;
  // nullopt when there is no symbolizer (no compiler library), or when the
  // child died or took longer than `limit` on this binary, which is then not
  // asked for again (the child is started again for others, a few times).
  // Says so on stderr once.
  std::optional<std::vector<std::vector<std::string>>> symbolize(
      int fd, const std::string &key, const std::vector<uint64_t> &addresses,
      std::chrono::milliseconds limit = std::chrono::seconds(10));

 private:
  static constexpr int kMaxStarts = 3;
  bool start();
  bool wait_ready();
  void stop();
  void warn(const std::string &what);

  pid_t pid_ = -1;
  UniqueFd socket_;
  std::string empty_root_;  // until the child is in it
  bool ready_ = false;
  int starts_ = 0;
  std::set<std::string> failed_keys_;
  bool warned_ = false;
};

}  // namespace mt
