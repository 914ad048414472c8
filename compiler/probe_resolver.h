// Turns the probe names a script declared into concrete probes this kernel
// has: expands wildcards, picks the first available alternative, and looks
// up each probe's typed arguments.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "compiler/declaration.h"
#include "compiler/kernel_btf.h"
#include "compiler/probe_name.h"
#include "compiler/tracefs_format.h"

namespace mt {

struct ResolvedProbe {
  int decl_id = 0;
  ProbeName name;
  std::optional<TraceFormat> format;  // tracepoint fields
  BtfSignature signature;             // kprobe/fentry/tp_btf/raw tracepoint arguments
  bool has_signature = false;
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
};

struct Resolution {
  std::vector<ResolvedProbe> probes;  // in-kernel probes, in declaration order
  std::vector<ResolvedProbe> user;    // begin, end, interval
  std::vector<std::string> notes;     // which alternative was used, shown with -v
};

// Throws mt::Error naming the script line when a probe cannot be had.
Resolution resolve_probes(const Declaration &decl, KernelFacts &kernel);

// The names in `candidates` closest to `name` (edit distance), best first.
std::vector<std::string> nearest_names(const std::string &name,
                                       const std::vector<std::string> &candidates, size_t count);

}  // namespace mt
