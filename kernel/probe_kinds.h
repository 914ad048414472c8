// Every probe kind, and what the stages need to know of each, in one
// table (probe_kinds.cpp): a new kind whose behaviour combines these traits
// is a new enum value and a row there, and nothing else.
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
  Usdt,
  Interval,
  Begin,
  End,
};

// How a probe's target is written after its kind.
enum class TargetForm {
  None,           // begin, end (also as BEGIN, END)
  CategoryEvent,  // tracepoint:CATEGORY:EVENT
  Name,           // kprobe:FUNCTION, tp_btf:EVENT
  PathSymbol,     // uprobe:PATH:SYMBOL
  PathProbe,      // usdt:PATH:PROVIDER:NAME
  Period,         // interval:ms:N, interval:s:N
};

// Where the kernel has a kind's targets, and the types of their arguments.
enum class TargetSource {
  None,               // nothing to find: runs in Lua
  TracefsEvents,      // tracefs events, each with its format file
  BtfRawTracepoints,  // the btf_trace_* prototypes of vmlinux and modules
  BtfFunctions,       // the functions of vmlinux's and modules' BTF
  Binary,             // a file's symbols, untyped
  UsdtNotes,          // a file's USDT probes (.note.stapsdt), typed by their notes
};

// What a program receives, and so how its arguments are read.
enum class ProgramContext {
  None,              // no program
  TracepointRecord,  // the event's tracefs record: args is the context itself
  Registers,         // struct pt_regs: arguments by the calling convention
  ArgumentArray,     // __u64 ctx[]: the BTF-typed arguments in order
};

// Where `retval` comes from.
enum class ReturnValue {
  None,
  Register,        // the return register of pt_regs
  AfterArguments,  // the context's slot after the arguments (fexit)
};

// What the kernel must allow beyond BPF itself.
enum class KernelNeeds { Nothing, Kprobes, Fentry };

// When a probe runs.
enum class RunsAt { Kernel, Start, Period, End };

// What `-l` lists for a kind.
enum class ListedFrom {
  Nothing,
  TracefsEvents,
  BtfRawTracepoints,
  KprobeFunctions,  // the kernel's available_filter_functions
  BtfFunctions,
};

// A kind's row; what a row leaves out takes the default here.
struct ProbeKindInfo {
  ProbeKind kind;
  const char *name;                     // as scripts write it: "tracepoint"
  std::array<const char *, 2> alias{};  // bpftrace's short names ("t"), nullptr when none
  const char *section = "";             // ELF section libbpf attaches by ("tracepoint/")
  TargetForm target = TargetForm::None;
  TargetSource source = TargetSource::None;
  ProgramContext context = ProgramContext::None;
  bool sees_arguments = true;  // args.NAME (a return probe may see only retval)
  ReturnValue retval = ReturnValue::None;
  bool btf_typed = false;     // arguments typed by BTF: their pointers are read directly
  bool user_memory = false;   // reads the traced program's memory, attached to a file (uprobes)
  bool shares_event = false;  // probes on one event share one program (tracepoints)
  KernelNeeds needs = KernelNeeds::Nothing;
  RunsAt runs = RunsAt::Kernel;
  ListedFrom listed = ListedFrom::Nothing;
};

// The row of `kind`; every kind has one.
const ProbeKindInfo &probe_kind(ProbeKind kind);
const std::vector<ProbeKindInfo> &probe_kinds();

}  // namespace mt
