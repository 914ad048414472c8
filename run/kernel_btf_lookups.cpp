// Names an object makes libbpf look up in the kernel's BTF, found in one pass.
#include "run/kernel_btf_lookups.h"

#include <bpf/btf.h>
#include <elf.h>

#include <array>
#include <set>

#include "common/error.h"
#include "compiler/bpf_elf.h"

namespace mt {

std::vector<BtfLookup> kernel_btf_lookups(std::string_view object) {
  // The sections of programs libbpf attaches to a kernel function by its
  // BTF id, found by name.
  constexpr std::array<std::string_view, 6> kFunctionSections = {
      "fentry/", "fexit/", "fmod_ret/", "fentry.s/", "fexit.s/", "fmod_ret.s/"};
  constexpr std::string_view kTracepoint = "tp_btf/";
  std::vector<BtfLookup> lookups;
  try {
    ElfObject elf(object);
    for (const auto &section : elf.sections()) {
      std::string_view name = section.name;
      if (!section.executable())
        continue;
      if (name.starts_with(kTracepoint))
        lookups.push_back(
            {"btf_trace_" + std::string(name.substr(kTracepoint.size())), BTF_KIND_TYPEDEF});
      for (std::string_view prefix : kFunctionSections)
        if (name.starts_with(prefix))
          lookups.push_back({std::string(name.substr(prefix.size())), BTF_KIND_FUNC});
    }
    // Externs: a kfunc is looked up as a function, a kernel variable as a
    // variable; which one an extern is does not matter here.
    for (const auto &symbol : elf.symbols())
      if (symbol.section == SHN_UNDEF && !symbol.name.empty() && symbol.binding != STB_LOCAL) {
        lookups.push_back({symbol.name, BTF_KIND_FUNC});
        lookups.push_back({symbol.name, BTF_KIND_VAR});
      }
  } catch (const Error &) {
    return {};
  }
  return lookups;
}

void find_in_one_pass(const struct btf *btf, std::vector<BtfLookup> &lookups) {
  // Most types are passed over on their kind, most of the rest on their
  // name's first character. The pass ends once each name is found, in
  // either kind asked for it (an extern is looked up as both).
  uint32_t kinds = 0;
  std::array<bool, 256> first_characters{};
  std::set<std::string> names_left;
  for (BtfLookup &lookup : lookups) {
    lookup.id = 0;
    if (lookup.kind < 32 && !lookup.name.empty()) {
      kinds |= 1u << lookup.kind;
      first_characters[static_cast<unsigned char>(lookup.name[0])] = true;
      names_left.insert(lookup.name);
    }
  }
  uint32_t count = btf__type_cnt(btf);
  for (uint32_t id = 1; id < count && !names_left.empty(); id++) {
    const struct btf_type *type = btf__type_by_id(btf, id);
    uint32_t kind = btf_kind(type);
    if (!(kinds >> kind & 1))
      continue;
    const char *name = btf__name_by_offset(btf, type->name_off);
    if (!name || !first_characters[static_cast<unsigned char>(name[0])])
      continue;
    for (BtfLookup &lookup : lookups)
      if (lookup.id == 0 && lookup.kind == kind && lookup.name == name) {
        lookup.id = static_cast<int32_t>(id);
        names_left.erase(lookup.name);
      }
  }
}

}  // namespace mt
