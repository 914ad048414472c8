// Finds every instruction of a BPF object's code that reaches into the
// kernel beyond the program: helper calls, kfunc calls, and instructions
// no compiler emits from plain C (a pseudo call of another kind, a 64-bit
// load that names a map or BTF object by number). Read from the compiled
// bytes, so nothing in the C text can hide a call.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/bpf_elf.h"

namespace mt {

struct KernelCall {
  enum class Kind {
    Helper,    // call of helper `id`
    Kfunc,     // call of kernel function `symbol`, or of BTF id `id` when hand-made
    HandMade,  // an instruction Clang does not emit from C; `id` is its src_reg
  };
  Kind kind = Kind::Helper;
  std::string section;  // the code section holding it
  uint32_t offset = 0;  // bytes from the section's start
  long id = 0;
  std::string symbol;
};

// Every such instruction of every code section, in section order.
std::vector<KernelCall> scan_kernel_calls(const ElfObject &object);

}  // namespace mt
