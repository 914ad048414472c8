// moontrace -l [PATTERN]: the probes this kernel offers, one per line in
// the form a script names them; with `verbose`, each one's arguments.
#pragma once
#include <cstdio>
#include <string>

#include "kernel/probe_name.h"

namespace mt {

class KernelFacts;

// A -l PATTERN: a glob (* and ?) over full probe names, also tried against
// the name without its kind, so "io_uring:*" finds
// tracepoint:io_uring:io_uring_complete. "" matches everything.
class ProbePattern {
 public:
  explicit ProbePattern(std::string glob);
  bool matches(const std::string &probe) const;
  // False when the pattern starts with another kind ("tracepoint:..."), so
  // probes of `kind` need not be gathered at all.
  bool may_match_kind(ProbeKind kind) const;
  // True when the pattern starts with `kind` ("kprobe:...").
  bool names_kind(ProbeKind kind) const;

 private:
  std::string glob_;
  std::string kind_;  // the kind the pattern starts with, or ""
};

// Prints every probe matching the glob `pattern` ("" matches all) to `out`;
// returns how many matched. Throws mt::Error when none did and tracefs,
// unreadable without root, may have hidden the ones asked for.
size_t list_probes(const std::string &pattern, bool verbose, KernelFacts &kernel, std::FILE *out);

}  // namespace mt
