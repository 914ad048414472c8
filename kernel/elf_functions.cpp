// Reads a binary's defined function symbols with libelf, for -l 'uprobe:PATH:*'.
#include "kernel/elf_functions.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>

#include "kernel/elf_file.h"

namespace mt {

std::vector<std::string> elf_function_names(const std::string &path) {
  ElfFile file(path, "functions to probe");
  Elf *elf = file.elf();
  std::vector<std::string> names;
  // .symtab when the file keeps it (it holds the dynamic symbols too).
  for (Elf64_Word wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != wanted || !shdr.sh_entsize)
        continue;
      Elf_Data *data = elf_getdata(scn, nullptr);
      for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) ||
            GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || !sym.st_value)
          continue;
        if (const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name); name && *name)
          names.push_back(name);
      }
    }
    if (!names.empty())
      break;
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace mt
