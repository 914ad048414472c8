// Names the frames of user stacks. The kernel gives each frame as the build
// id of its binary and an offset in that file (or, when it could not, as an
// address in its process): binaries are found by build id, first among the
// files the stack's process mapped, then the -c command, any running
// process's, and /usr/lib/debug, so that a program that has exited is
// still named. A mapped file is opened through /proc/PID/map_files (the
// very file mapped, whatever namespace its path is in) and checked against
// the device and inode the mapping names. Functions are named by LLVM in a
// child process that runs as nobody (run/symbolizer_process.h).
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/unique_fd.h"
#include "kernel/elf_file_facts.h"
#include "run/symbolizer_process.h"

namespace mt {

class UserSymbols {
 public:
  // Starts the symbolizer now, so that it is ready when stacks arrive.
  void prepare() { symbolizer_.launch(); }
  // Reads PID's mappings, while it runs: its binaries are then known.
  void remember_process(uint32_t pid);
  // A binary to know by its build id, such as the -c command's.
  void remember_file(const std::string &path);

  // The functions at `offset` in the binary of build id `build_id` (hex, as
  // the kernel gives it: 20 bytes, zero-padded), innermost first;
  // "[FILE+0xOFFSET]" or "[BUILD_ID+0xOFFSET]" when none.
  std::vector<std::string> frames(uint32_t pid, const std::string &build_id, uint64_t offset);
  // The same for an address in PID's memory.
  std::vector<std::string> frames_at(uint32_t pid, uint64_t address);

 private:
  // Where a file was found: a process's mapping of it, or a path alone.
  struct Source {
    std::string path;
    uint32_t pid = 0;                                 // 0: the path alone
    uint64_t map_start = 0, map_end = 0, offset = 0;  // the mapping, and its file offset
    dev_t dev = 0;                                    // as the mapping names it (pid != 0)
    ino_t ino = 0;
  };
  struct File {
    Source source;
    dev_t dev = 0;
    ino_t ino = 0;
    ElfFileFacts facts;
    std::string build_id;  // as the kernel gives it
  };
  using Identity = std::pair<dev_t, ino_t>;

  UniqueFd open(const Source &source, struct stat *st) const;
  const File *file(const Source &source);
  const File *find(uint32_t pid, const std::string &build_id);
  std::vector<std::string> symbolize(const File &file, uint64_t offset);

  std::map<uint32_t, std::vector<Source>> processes_;  // their file mappings
  std::map<Identity, File> files_;                     // ELF files only
  std::set<std::string> not_found_;                    // paths alone that did not open as ELF
  std::map<std::string, Identity> by_build_id_;        // the first file found with each
  std::map<std::tuple<dev_t, ino_t, uint64_t>, std::vector<std::string>> named_;
  std::chrono::steady_clock::time_point last_scan_{};
  SymbolizerProcess symbolizer_;
};

}  // namespace mt
