// The names libbpf will look up in the kernel's BTF to load an object,
// found ahead in one pass.
//
// libbpf finds a tp_btf program's tracepoint (the typedef btf_trace_NAME),
// an fentry program's function and each kfunc an object calls by name,
// each with a walk of the kernel's types from the first (150,000 here):
// a warm `uring` start made 12 of them, 0.3 ms each, on the critical path
// of its two load halves (issue 18). kernel_btf_ahead.cpp answers them
// from one pass made while the script is declared.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct btf;

namespace mt {

// A name of a kind (BTF_KIND_*), and the first kernel type of that name
// and kind: 0 when there is none, or it was not looked for.
struct BtfLookup {
  std::string name;
  uint32_t kind = 0;
  int32_t id = 0;
};

// The lookups libbpf makes in the kernel's BTF to load OBJECT (a BPF ELF),
// as libbpf 1.1 to 1.7 name them. None when OBJECT is malformed.
std::vector<BtfLookup> kernel_btf_lookups(std::string_view object);

// Sets each lookup's id, as btf__find_by_name_kind would (the first type
// of that name and kind), in one pass over BTF's types.
void find_in_one_pass(const struct btf *btf, std::vector<BtfLookup> &lookups);

}  // namespace mt
