// Parses probe names such as tracepoint:io_uring:io_uring_complete into
// their kind and parts; bpftrace's short aliases are accepted too.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kernel/probe_kinds.h"

namespace mt {

struct ProbeName {
  ProbeKind kind;
  std::string category;  // tracepoint category; a USDT probe's provider
  std::string target;    // event, function, or uprobe (USDT) binary path
  std::string symbol;    // uprobe symbol; a USDT probe's name
  long interval_ms = 0;

  // Kernel-side probes get a BPF program; begin/end/interval run in Lua.
  bool in_kernel() const;
  // Probe kinds whose pointers may be dereferenced directly (BTF-typed).
  bool has_direct_btf_access() const;
  bool has_wildcard() const;
  std::string to_string() const;
};

const char *kind_name(ProbeKind kind);

// The parsed name; throws Error on one that is malformed.
ProbeName parse_probe_name(const std::string &text);
// Whether any of NAMES is found in a file rather than in the kernel
// (uprobes), or does not parse: what is there depends on more than the
// kernel.
bool any_names_a_file(const std::vector<std::string> &names);

// Shell-style glob with * and ?.
bool glob_match(const std::string &pattern, const std::string &text);

}  // namespace mt
