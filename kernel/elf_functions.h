// The functions a binary or shared library defines, as uprobes name them:
// from its symbol table, else its dynamic one (libelf).
#pragma once
#include <string>
#include <vector>

namespace mt {

// Sorted, without duplicates; throws mt::Error naming PATH when it is not
// a readable ELF file.
std::vector<std::string> elf_function_names(const std::string &path);

}  // namespace mt
