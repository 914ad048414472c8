// Turns captured stacks (kstack, ustack) into their frames' names: reads
// each stack from its map by id, names kernel frames from kallsyms and user
// frames by build id (run/user_symbols.h). Installed as the decoder's stack
// text while it lives, so events, handlers, aggregations and drawings all
// show names.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "kernel/kernel_symbols.h"
#include "run/user_symbols.h"

namespace mt {

class BpfProgram;

class StackResolver {
 public:
  // `user_stacks`: the program takes user stacks, and announces their
  // processes (GeneratedProgram::announces_processes); `command`: the -c
  // command line, whose program is then known by build id; `pid`: -p's.
  StackResolver(const BpfProgram &program, bool user_stacks, const std::string &command, int pid);
  ~StackResolver();
  StackResolver(const StackResolver &) = delete;
  StackResolver &operator=(const StackResolver &) = delete;

  // A thread-name record (struct mt_thread_name): a process that sent its
  // first user stack, whose mappings are read while it still runs.
  void process_seen(const void *record, size_t size);

  // The stack `value` of map `map` as record_decoder's StackText shows it.
  std::string text(const std::string &map, uint64_t value);

 private:
  std::vector<std::string> kernel_frames(int fd, uint32_t id, int depth);
  std::vector<std::string> user_frames(int fd, uint32_t pid, uint32_t id);
  size_t value_size(int fd);  // a stack map's, in bytes

  const BpfProgram &program_;
  bool user_stacks_;
  std::optional<KernelSymbols> kernel_;  // read on the first kernel stack
  UserSymbols user_;
  std::map<std::pair<std::string, uint64_t>, std::string> texts_;
  std::map<int, size_t> value_sizes_;
};

}  // namespace mt
