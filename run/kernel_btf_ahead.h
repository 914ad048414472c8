// The kernel's BTF for libbpf, parsed before the load asks for it.
//
// libbpf parses /sys/kernel/btf/vmlinux (5.5 MB here) for each object it
// loads with tp_btf or fentry programs, CO-RE relocations or kernel
// symbols: for uring's two halves, 11 ms each at the start of the load,
// on the critical path of a warm start (issue 18). sysfs hands the file
// out 4 KiB per read(), about 1,350 calls. This file defines
// btf__load_vmlinux_btf in the executable, where libbpf's own calls to it
// land (they go through its PLT), and serves them copies parsed on the
// maps-ahead thread while the script is declared, from a private mapping
// of the file where the kernel allows one (Linux 6.16 and later). Where
// the file can only be read, a copy costs what libbpf's own does: one is
// read ahead, and the other half reads its own while the first verifies.
#pragma once
#include <atomic>
#include <string_view>

struct btf;

namespace mt {

// Whether libbpf parses the kernel's BTF to load OBJECT (a BPF ELF), as
// libbpf 1.1 decides it: a program attached by BTF id, a CO-RE relocation
// or an extern (a kernel symbol or kfunc). False when OBJECT is malformed.
bool needs_kernel_btf(std::string_view object);

// Parses COPIES of the kernel's BTF, one for each load to come (only one
// where the file cannot be mapped); stops early when CANCELLED is set.
void parse_kernel_btf_ahead(unsigned copies, const std::atomic<bool> &cancelled);

// Frees the copies no load took; returns how many were parsed ahead and
// how many of those the loads took.
struct KernelBtfAhead {
  unsigned parsed = 0, taken = 0;
};
KernelBtfAhead drop_kernel_btf_ahead();

}  // namespace mt

// libbpf's, in its place: a copy parsed ahead, or one parsed now.
extern "C" struct btf *btf__load_vmlinux_btf(void);
