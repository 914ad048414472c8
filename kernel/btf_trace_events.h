// Tracepoints as a kernel's BTF alone describes them, for a kernel whose
// tracefs cannot be read: not running here (check --btf), or tracefs
// readable by root only. BTF names no tracepoint categories; these come
// from names this kernel's tracefs knows, else from the event's prefix.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_btf.h"
#include "kernel/tracefs_format.h"

namespace mt {

// EVENT's record, as tracefs would describe it: from the event's own
// struct trace_event_raw_<event>; for an event defined on a shared class
// (DEFINE_EVENT), from the class whose probe takes the same arguments
// where BTF tells which; for syscalls:sys_enter_NAME and sys_exit_NAME of
// a syscall the kernel has, from the syscall's functions. HINT, the
// event's record on another kernel (this one's), settles what BTF leaves
// open: which class, a syscall's arguments (ABI, so the same). Nothing
// when BTF cannot tell.
std::optional<TraceFormat> btf_trace_event_format(const KernelBtf &btf, const std::string &category,
                                                  const std::string &event,
                                                  const TraceFormat *hint = nullptr);

// "CATEGORY:EVENT" of every tracepoint BTF shows, sorted. `known`: the
// "CATEGORY:EVENT" names a tracefs lists, whose categories are taken for
// the same events, and as prefixes (io_uring_x is io_uring's) for others.
std::vector<std::string> btf_tracepoint_names(const KernelBtf &btf,
                                              const std::vector<std::string> &known);

}  // namespace mt
