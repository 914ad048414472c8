// Names the frames of user stacks. The kernel gives each frame as the build
// id of its binary and an offset in that file (or, when it could not, as an
// address in its process): binaries are found by build id, first among the
// files the stack's process mapped, then the -c command, any running
// process's, and /usr/lib/debug, so that a program that has exited is
// still named. Functions are named by LLVM in a child process that runs as
// nobody (run/symbolizer_process.h).
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernel/elf_file_facts.h"
#include "run/symbolizer_process.h"

namespace mt {

class UserSymbols {
 public:
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
  struct File {
    std::string path;
    ElfFileFacts facts;
    std::string build_id;  // as the kernel gives it
  };
  struct Mapping {
    uint64_t start = 0, end = 0, offset = 0;
    std::string path;
  };

  const File *file(const std::string &path);
  const File *find(uint32_t pid, const std::string &build_id);
  std::vector<std::string> symbolize(const File &file, uint64_t offset);

  std::map<uint32_t, std::vector<Mapping>> processes_;
  std::map<std::string, File> files_;               // by path, ELF files only
  std::set<std::string> not_elf_;                   // paths that are not
  std::map<std::string, std::string> by_build_id_;  // the first path found with each
  std::map<std::pair<std::string, uint64_t>, std::vector<std::string>> named_;
  std::chrono::steady_clock::time_point last_scan_{};
  SymbolizerProcess symbolizer_;
};

}  // namespace mt
