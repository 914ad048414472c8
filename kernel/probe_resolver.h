// Turns the probe names a script declared into concrete probes this kernel
// has: expands wildcards, picks the first available alternative, and looks
// up each probe's typed arguments.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/declaration.h"
#include "kernel/kernel_btf.h"
#include "kernel/probe_name.h"
#include "kernel/tracefs_format.h"

namespace mt {

struct ResolvedProbe {
  int decl_id = 0;
  ProbeName name;
  std::optional<TraceFormat> format;  // tracepoint fields
  BtfSignature signature;             // kprobe/fentry/tp_btf/raw tracepoint arguments
  bool has_signature = false;
  const KernelBtf *btf = nullptr;  // the BTF the signature is in: vmlinux's or a module's
  std::vector<std::string> usdt_argument_types;  // a USDT probe's, as C types ("__s32")
};

// Facts about the running kernel the resolver depends on; tests replace it.
class KernelFacts {
 public:
  virtual ~KernelFacts() = default;
  virtual std::optional<TraceFormat> tracepoint(const std::string &category,
                                                const std::string &event);
  virtual std::vector<std::string> tracepoint_names();
  virtual bool tracefs_readable();
  virtual const KernelBtf *btf();
  virtual bool has_kprobes();
  // Functions kprobes can attach to (tracefs available_filter_functions),
  // sorted, without duplicates; empty when that file cannot be read.
  virtual std::vector<std::string> kprobe_function_names();
  // Empty when fentry/fexit programs can be loaded, else the reason.
  virtual std::string fentry_unavailable_reason();
  // "MAJOR:MINOR" of block device `name` (sysfs class/block/NAME/dev),
  // "" when there is none.
  virtual std::string block_device(const std::string &name);
  // The kernel's release, as uname -r prints it.
  virtual std::string release();
};

struct Resolution {
  std::vector<ResolvedProbe> probes;  // in-kernel probes, in declaration order
  std::vector<ResolvedProbe> user;    // begin, end, interval
  std::vector<std::string> notes;     // which alternative was used, shown with -v
  // The BTF that describes the probes' types when one is in a module (its
  // BTF is split on vmlinux's, so it describes both); nullptr: vmlinux's.
  const KernelBtf *types = nullptr;
};

// The alternative of a probe that this kernel has, expanded.
struct Alternative {
  size_t index = 0;  // in the list of alternatives
  ProbeName name;
  std::vector<ResolvedProbe> probes;  // concrete probes (several for a wildcard)
};

// The first of `alternatives` this kernel has, or nothing; `reasons` gets
// "NAME: why" for each one passed over. A probe kind the kernel cannot use
// (kprobes without CONFIG_KPROBES, refused fentry) passes an alternative
// over, except the last one unless `check_last_kind`: used anyway, it
// fails later with the kernel's own reason. Throws mt::Error for a name
// that does not parse.
std::optional<Alternative> first_available(const std::vector<std::string> &alternatives,
                                           KernelFacts &kernel, bool check_last_kind,
                                           std::vector<std::string> &reasons);

// Why this kernel cannot run probes of `kind` (no kprobes, fentry refused),
// or "" when it can.
std::string kind_unavailable(ProbeKind kind, KernelFacts &kernel);

// Throws mt::Error naming the script line when a probe cannot be had.
Resolution resolve_probes(const Declaration &decl, KernelFacts &kernel);

// The names in `candidates` closest to `name` (edit distance), best first,
// of those within a third of its length (3 edits at least).
std::vector<std::string> nearest_names(const std::string &name,
                                       const std::vector<std::string> &candidates, size_t count);

}  // namespace mt
