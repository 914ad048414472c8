// Walks each code section's instructions and reports helper, kfunc and other kernel calls.
#include "compiler/instruction_scan.h"

#include <linux/bpf.h>

#include <cstring>
#include <map>

namespace mt {

std::vector<KernelCall> scan_kernel_calls(const ElfObject &object) {
  std::vector<KernelCall> found;
  for (const ElfSection &section : object.sections()) {
    if (!section.executable())
      continue;
    // Calls to functions outside the section are relocated by libbpf; one
    // against an undefined symbol becomes a kfunc call.
    std::map<uint64_t, size_t> relocated;
    for (const ElfRelocation &r : object.relocations_of(section.index))
      relocated[r.offset] = r.symbol;
    size_t count = section.data.size() / sizeof(bpf_insn);
    for (size_t i = 0; i < count; i++) {
      bpf_insn insn;
      std::memcpy(&insn, section.data.data() + i * sizeof(insn), sizeof(insn));
      auto report = [&](KernelCall::Kind kind, long id, std::string symbol = {}) {
        found.push_back({kind, section.name, uint32_t(i * sizeof(insn)), id, std::move(symbol)});
      };
      uint8_t cls = BPF_CLASS(insn.code);
      if (insn.code == (BPF_LD | BPF_IMM | BPF_DW)) {
        // Clang leaves src_reg 0 and a relocation: libbpf fills in the rest.
        if (insn.src_reg != 0)
          report(KernelCall::Kind::HandMade, insn.src_reg);
        i++;  // the second half of the 16-byte load is data
        continue;
      }
      if ((cls != BPF_JMP && cls != BPF_JMP32) || BPF_OP(insn.code) != BPF_CALL)
        continue;
      if (cls == BPF_JMP && insn.src_reg == BPF_PSEUDO_KFUNC_CALL) {
        report(KernelCall::Kind::Kfunc, insn.imm);  // by BTF id, as libbpf would emit it
      } else if (cls == BPF_JMP32 || insn.src_reg > BPF_PSEUDO_CALL) {
        report(KernelCall::Kind::HandMade, insn.src_reg);
      } else if (insn.src_reg == 0) {
        report(KernelCall::Kind::Helper, insn.imm);
      } else if (auto r = relocated.find(i * sizeof(insn)); r != relocated.end()) {
        const ElfSymbol &target = object.symbols()[r->second];
        bool into_code = target.section > 0 && target.section < object.sections().size() &&
                         object.sections()[target.section].executable();
        if (!into_code)
          report(KernelCall::Kind::Kfunc, 0, target.name);
      }
    }
  }
  return found;
}

}  // namespace mt
