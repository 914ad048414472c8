// The table of probe kinds.
#include "kernel/probe_kinds.h"

#include <cstddef>

namespace mt {

const std::vector<ProbeKindInfo> &probe_kinds() {
  // kind, name, aliases, section, in kernel, BTF-typed, user memory, shares its event
  static const std::vector<ProbeKindInfo> kinds = {
      {ProbeKind::Tracepoint, "tracepoint", {"t"}, "tracepoint/", true, false, false, true},
      {ProbeKind::TpBtf, "tp_btf", {}, "tp_btf/", true, true, false, true},
      {ProbeKind::RawTracepoint,
       "rawtracepoint",
       {"rt", "raw_tp"},
       "raw_tp/",
       true,
       false,
       false,
       true},
      {ProbeKind::Kprobe, "kprobe", {"k"}, "kprobe/", true, false, false, false},
      {ProbeKind::Kretprobe, "kretprobe", {"kr"}, "kretprobe/", true, false, false, false},
      {ProbeKind::Fentry, "fentry", {"f"}, "fentry/", true, true, false, false},
      {ProbeKind::Fexit, "fexit", {"fr"}, "fexit/", true, true, false, false},
      {ProbeKind::Uprobe, "uprobe", {"u"}, "uprobe", true, false, true, false},
      {ProbeKind::Uretprobe, "uretprobe", {"ur"}, "uretprobe", true, false, true, false},
      {ProbeKind::Interval, "interval", {"i"}, "", false, false, false, false},
      {ProbeKind::Begin, "begin", {}, "", false, false, false, false},
      {ProbeKind::End, "end", {}, "", false, false, false, false},
  };
  return kinds;
}

const ProbeKindInfo &probe_kind(ProbeKind kind) {
  return probe_kinds()[static_cast<size_t>(kind)];
}

}  // namespace mt
