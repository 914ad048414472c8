// Opens a regular file for libelf.
#include "kernel/elf_file.h"

#include <libelf.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/regular_file.h"

namespace mt {

ElfFile::ElfFile(const std::string &path, const std::string &what) {
  fd_ = open_regular_file(path);
  if (!fd_)
    throw Error(errno == EINVAL ? path + " is not a regular file, so it has no " + what
                                : "cannot read " + path + ": " + std::strerror(errno));
  elf_version(EV_CURRENT);
  elf_ = elf_begin(fd_.get(), ELF_C_READ, nullptr);
  if (!elf_ || elf_kind(elf_) != ELF_K_ELF) {
    if (elf_)
      elf_end(elf_);
    throw Error(path + " is not an ELF file, so it has no " + what);
  }
}

ElfFile::~ElfFile() {
  elf_end(elf_);
}

}  // namespace mt
