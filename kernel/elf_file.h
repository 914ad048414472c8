// A binary opened for libelf, as a script names it (a uprobe's or USDT
// probe's file): a regular file only, or one error line saying why not.
#pragma once
#include <string>

#include "common/unique_fd.h"

typedef struct Elf Elf;

namespace mt {

class ElfFile {
 public:
  // Throws mt::Error naming `path`, and `what` it would have ("functions
  // to probe"), when it cannot be read or is no regular ELF file.
  ElfFile(const std::string &path, const std::string &what);
  ~ElfFile();
  ElfFile(const ElfFile &) = delete;
  ElfFile &operator=(const ElfFile &) = delete;

  Elf *elf() const { return elf_; }

 private:
  UniqueFd fd_;
  Elf *elf_ = nullptr;
};

}  // namespace mt
