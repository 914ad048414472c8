// Every probe kind, and what the stages need to know of each, in one
// table (probe_kinds.cpp): a new kind starts with a row there.
#pragma once
#include <array>
#include <vector>

namespace mt {

enum class ProbeKind {
  Tracepoint,
  TpBtf,
  RawTracepoint,
  Kprobe,
  Kretprobe,
  Fentry,
  Fexit,
  Uprobe,
  Uretprobe,
  Interval,
  Begin,
  End,
};

struct ProbeKindInfo {
  ProbeKind kind;
  const char *name;                   // as scripts write it: "tracepoint"
  std::array<const char *, 2> alias;  // bpftrace's short names ("t"), nullptr when none
  const char *section;                // ELF section libbpf attaches by ("tracepoint/"); "" for none
  bool in_kernel;                     // gets a BPF program (begin, end and interval run in Lua)
  bool btf_typed;                     // arguments typed by BTF: their pointers are read directly
  bool user_memory;                   // reads the traced program's memory (uprobes)
  bool shares_event;                  // probes on one event share one program (tracepoints)
};

// The row of `kind`; every kind has one.
const ProbeKindInfo &probe_kind(ProbeKind kind);
const std::vector<ProbeKindInfo> &probe_kinds();

}  // namespace mt
