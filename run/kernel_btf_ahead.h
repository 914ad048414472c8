// The kernel's BTF for libbpf, parsed before the load asks for it.
//
// libbpf parses /sys/kernel/btf/vmlinux (5.5 MB here) for each object it
// loads with tp_btf or fentry programs, CO-RE relocations or kernel
// symbols: for uring's two halves, 11 ms each at the start of the load,
// on the critical path of a warm start (issue 18). sysfs hands the file
// out 4 KiB per read(), about 1,350 calls. This file defines
// btf__load_vmlinux_btf in the executable, where libbpf's own calls to it
// land (they go through its PLT), and serves them one copy parsed on the
// maps-ahead thread while the script is declared, from a private mapping
// of the file where the kernel allows one (Linux 6.16 and later).
//
// Both halves share that copy: libbpf only reads the kernel's BTF while it
// loads (name searches, CO-RE candidates, kfunc and attach ids; checked in
// libbpf 1.1 to 1.7, whose one lazily set field, the pointer size, is set
// before the copy is shared), and frees it at the end of the load or when
// the object closes, through its PLT too; btf__free here then lets go of
// the shared copy only when the last load and the run have. A second copy
// cost 4-6 ms of CPU time and 5.5 MB per warm start. The copy is lent only
// while the loads run: the engine's own KernelBtf, made before, keeps one
// of its own.
#pragma once
#include <atomic>
#include <string_view>

struct btf;

namespace mt {

// Whether libbpf parses the kernel's BTF to load OBJECT (a BPF ELF), as
// libbpf 1.1 decides it: a program attached by BTF id, a CO-RE relocation
// or an extern (a kernel symbol or kfunc). False when OBJECT is malformed.
bool needs_kernel_btf(std::string_view object);

// Parses the kernel's BTF for the loads of OBJECT to come, unless
// CANCELLED is set, and finds in it the names they will look up
// (kernel_btf_lookups.h).
void parse_kernel_btf_ahead(std::string_view object, const std::atomic<bool> &cancelled);

// From now until drop_kernel_btf_ahead(), libbpf's loads take the copy
// parsed ahead, if there is one.
void lend_kernel_btf_ahead();

// Lets go of the copy parsed ahead (freed once no load holds it); returns
// whether there was one, how many loads took it and how many of their
// lookups by name it answered with what was found ahead.
struct KernelBtfAhead {
  bool parsed = false;
  unsigned taken = 0;
  unsigned found_ahead = 0;
};
KernelBtfAhead drop_kernel_btf_ahead();

}  // namespace mt

// libbpf's, in their place: the copy parsed ahead, or one parsed now;
// btf__free, which frees the shared copy only once nothing holds it; and
// btf__find_by_name_kind, which answers from what was found ahead in it.
extern "C" struct btf *btf__load_vmlinux_btf(void);
extern "C" void btf__free(struct btf *btf);
extern "C" int btf__find_by_name_kind(const struct btf *btf, const char *name, unsigned kind);
