// Expands declared probes against this kernel's probes, suggesting near names when none fit.
#include "kernel/probe_resolver.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "common/error.h"
#include "common/regular_file.h"
#include "kernel/btf_trace_events.h"
#include "kernel/usdt_notes.h"

namespace mt {

std::optional<TraceFormat> KernelFacts::tracepoint(const std::string &category,
                                                   const std::string &event) {
  // Without root tracefs is unreadable; the kernel's BTF still describes
  // most events' records (enough for --emit-c).
  if (!tracefs_readable()) {
    const KernelBtf *kbtf = btf();
    return kbtf ? btf_trace_event_format(*kbtf, category, event) : std::nullopt;
  }
  return read_trace_format(category, event);
}

bool KernelFacts::tracefs_readable() {
  std::string root = tracefs_root();
  return !root.empty() && access((root + "/events").c_str(), R_OK | X_OK) == 0;
}

std::vector<std::string> KernelFacts::tracepoint_names() {
  return list_tracepoints();
}

const KernelBtf *KernelFacts::btf() {
  return KernelBtf::get();
}

bool KernelFacts::has_kprobes() {
  // Without CONFIG_KPROBES the kernel has no kprobe_events interface.
  std::string root = tracefs_root();
  return !root.empty() && access((root + "/kprobe_events").c_str(), F_OK) == 0;
}

std::vector<std::string> KernelFacts::kprobe_function_names() {
  std::vector<std::string> names;
  std::string root = tracefs_root();
  if (root.empty())
    return names;
  // Lines are "FUNCTION" or "FUNCTION [MODULE]".
  std::ifstream file(root + "/available_filter_functions");
  std::string line;
  while (std::getline(file, line)) {
    std::string name = line.substr(0, line.find_first_of(" \t"));
    // Entries the kernel could not resolve to a real function.
    if (!name.empty() && name.rfind("__ftrace_invalid_address__", 0) != 0)
      names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string KernelFacts::fentry_unavailable_reason() {
  static std::string reason = [this]() -> std::string {
    const KernelBtf *kbtf = btf();
    if (!kbtf)
      return "the kernel has no BTF";
    int fn = btf__find_by_name_kind(kbtf->raw(), "vfs_read", BTF_KIND_FUNC);
    if (fn < 0)
      return "the kernel's BTF has no vfs_read to test fentry with";
    struct bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
                .attach_btf_id = (__u32)fn);
    int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "mt_fentry_test", "GPL", insns, 2, &opts);
    if (fd >= 0) {
      close(fd);
      return "";
    }
    return std::string("the kernel refuses fentry/fexit programs (") + std::strerror(errno) + ")";
  }();
  return reason;
}

std::string KernelFacts::release() {
  struct utsname u;
  return uname(&u) == 0 ? u.release : "";
}

std::string KernelFacts::block_device(const std::string &name) {
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
    return "";
  std::ifstream file("/sys/class/block/" + name + "/dev");
  std::string dev;
  std::getline(file, dev);
  return dev;
}

namespace {

std::vector<std::string> btf_names(KernelFacts &kernel, ProbeKind kind) {
  const KernelBtf *kbtf = kernel.btf();
  if (!kbtf)
    return {};
  if (probe_kind(kind).source == TargetSource::BtfRawTracepoints)
    return kbtf->raw_tracepoint_names();
  return kbtf->function_names();
}

// The concrete probes of one alternative: none when this kernel has none,
// and then why.
struct Expansion {
  std::vector<ResolvedProbe> probes;
  std::string why_none;
};

Expansion expand(const ProbeName &name, KernelFacts &kernel) {
  Expansion found;
  std::vector<ResolvedProbe> &out = found.probes;
  auto add = [&](ProbeName concrete) {
    ResolvedProbe p;
    p.name = std::move(concrete);
    out.push_back(std::move(p));
  };
  switch (probe_kind(name.kind).source) {
    case TargetSource::TracefsEvents: {
      if (name.has_wildcard()) {
        for (const auto &full : kernel.tracepoint_names()) {
          size_t colon = full.find(':');
          ProbeName n = name;
          n.category = full.substr(0, colon);
          n.target = full.substr(colon + 1);
          if (glob_match(name.category, n.category) && glob_match(name.target, n.target))
            add(n);
        }
      } else {
        add(name);
      }
      for (auto &p : out)
        p.format = kernel.tracepoint(p.name.category, p.name.target);
      std::erase_if(out, [](const ResolvedProbe &p) { return !p.format; });
      if (out.empty())
        found.why_none =
            kernel.tracefs_readable() ? "no such tracepoint"
            : name.has_wildcard()
                ? "cannot list tracepoints: tracefs is readable by root only"
                : "tracefs is readable by root only, and the kernel's BTF has no record "
                  "layout for this event";

      return found;
    }
    case TargetSource::Binary:
      // Checked as libbpf will not: a device, a FIFO or a file of /proc
      // named as the binary is never opened (a watchdog arms at an open).
      if (!open_regular_file(name.target)) {
        found.why_none =
            errno == EINVAL
                ? name.target + " is not a regular file, so it has no functions to probe"
                : "cannot read " + name.target + ": " + std::strerror(errno);
        return found;
      }
      add(name);
      return found;
    case TargetSource::UsdtNotes: {
      std::vector<UsdtNote> notes;
      try {
        notes = usdt_notes(name.target);
      } catch (const Error &e) {
        found.why_none = e.what();
        return found;
      }
      std::set<std::pair<std::string, std::string>> seen;
      for (const auto &note : notes) {
        // A probe inlined in several places has a note for each: one probe.
        if (!glob_match(name.category, note.provider) || !glob_match(name.symbol, note.name) ||
            !seen.emplace(note.provider, note.name).second)
          continue;
        ProbeName n = name;
        n.category = note.provider;
        n.symbol = note.name;
        add(n);
        out.back().usdt_argument_types = note.argument_types();
      }
      if (out.empty())
        found.why_none = "no such USDT probe in " + name.target;
      return found;
    }
    case TargetSource::None: add(name); return found;
    case TargetSource::BtfRawTracepoints:
    case TargetSource::BtfFunctions: break;
  }
  // BTF-described functions and raw tracepoints.
  const KernelBtf *kbtf = kernel.btf();
  if (!kbtf) {
    found.why_none = "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
    return found;
  }
  std::vector<std::string> targets;
  if (name.has_wildcard()) {
    for (const auto &n : btf_names(kernel, name.kind))
      if (glob_match(name.target, n))
        targets.push_back(n);
  } else {
    targets.push_back(name.target);
  }
  bool raw = probe_kind(name.kind).source == TargetSource::BtfRawTracepoints;
  for (const auto &t : targets) {
    ProbeName n = name;
    n.target = t;
    ResolvedProbe p;
    p.name = n;
    // vmlinux's BTF, else the loaded module's that has it (ext4 on most
    // distribution kernels).
    p.btf = raw ? kbtf->with_raw_tracepoint(t) : kbtf->with_function(t);
    p.has_signature = p.btf && (raw ? p.btf->raw_tracepoint_signature(t, p.signature)
                                    : p.btf->function_signature(t, p.signature));
    if (p.has_signature)
      out.push_back(std::move(p));
  }
  if (out.empty())
    found.why_none = raw ? "no such raw tracepoint in the BTF of the kernel and its loaded modules"
                         : "no such function in the BTF of the kernel and its loaded modules";
  return found;
}

std::vector<std::string> candidate_names(const ProbeName &name, KernelFacts &kernel) {
  std::vector<std::string> names;
  if (probe_kind(name.kind).source == TargetSource::TracefsEvents) {
    for (const auto &n : kernel.tracepoint_names())
      names.push_back(std::string(kind_name(name.kind)) + ":" + n);
  } else {
    for (const auto &n : btf_names(kernel, name.kind))
      names.push_back(std::string(kind_name(name.kind)) + ":" + n);
  }
  return names;
}

}  // namespace

std::string kind_unavailable(ProbeKind kind, KernelFacts &kernel) {
  switch (probe_kind(kind).needs) {
    case KernelNeeds::Kprobes:
      return kernel.has_kprobes() ? ""
                                  : "this kernel lacks CONFIG_KPROBES; use fentry:/fexit: or a "
                                    "tracepoint instead";
    case KernelNeeds::Fentry: return kernel.fentry_unavailable_reason();
    case KernelNeeds::Nothing: return "";
  }
  return "";
}

std::vector<std::string> nearest_names(const std::string &name,
                                       const std::vector<std::string> &candidates, size_t count) {
  // A name more than a third of its length away (3 edits at least) is no
  // likely typo; not measuring those keeps a long name against tens of
  // thousands of functions fast.
  size_t limit = std::max<size_t>(3, name.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  std::vector<size_t> row(name.size() + 1);
  for (const auto &c : candidates) {
    if ((c.size() > name.size() ? c.size() - name.size() : name.size() - c.size()) > limit)
      continue;
    for (size_t i = 0; i <= name.size(); i++)
      row[i] = i;
    size_t best = 0;
    for (size_t j = 1; j <= c.size() && best <= limit; j++) {
      size_t diag = row[0];
      row[0] = best = j;
      for (size_t i = 1; i <= name.size(); i++) {
        size_t up = row[i];
        row[i] = std::min({row[i] + 1, row[i - 1] + 1, diag + (name[i - 1] != c[j - 1])});
        best = std::min(best, row[i]);
        diag = up;
      }
    }
    if (best <= limit && row[name.size()] <= limit)
      scored.push_back({row[name.size()], c});
  }
  size_t n = std::min(count, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + n, scored.end());
  std::vector<std::string> found;
  for (size_t i = 0; i < n; i++)
    found.push_back(scored[i].second);
  return found;
}

std::optional<Alternative> first_available(const std::vector<std::string> &alternatives,
                                           KernelFacts &kernel, bool check_last_kind,
                                           std::vector<std::string> &reasons) {
  for (size_t alt = 0; alt < alternatives.size(); alt++) {
    const std::string &text = alternatives[alt];
    ProbeName name = parse_probe_name(text);
    Expansion found = expand(name, kernel);
    bool last = alt + 1 == alternatives.size();
    if (!found.probes.empty() && (!last || check_last_kind)) {
      // A later alternative can stand in for a probe kind this kernel lacks.
      std::string missing = kind_unavailable(name.kind, kernel);
      if (!missing.empty()) {
        found.probes.clear();
        found.why_none = missing;
      }
    }
    if (found.probes.empty()) {
      reasons.push_back(text + ": " + found.why_none);
      continue;
    }
    return Alternative{alt, std::move(name), std::move(found.probes)};
  }
  return std::nullopt;
}

Resolution resolve_probes(const Declaration &decl, KernelFacts &kernel) {
  Resolution result;
  for (const auto &probe : decl.probes) {
    std::vector<std::string> reasons;
    std::optional<Alternative> chosen;
    try {
      chosen = first_available(probe.alternatives, kernel, false, reasons);
    } catch (const Error &e) {
      throw Error(e.what(), probe.where);
    }
    bool found = chosen.has_value();
    if (found) {
      const ProbeName &name = chosen->name;
      const std::string &text = probe.alternatives[chosen->index];
      if (probe.alternatives.size() > 1 || name.has_wildcard()) {
        std::string note = "probe at " + probe.where.file + ":" + std::to_string(probe.where.line) +
                           ": using " + text;
        if (name.has_wildcard())
          note += " (" + std::to_string(chosen->probes.size()) + " matches)";
        for (const auto &r : reasons)
          note += "; skipped " + r;
        result.notes.push_back(note);
      }
      for (auto &c : chosen->probes) {
        c.decl_id = probe.id;
        (name.in_kernel() ? result.probes : result.user).push_back(std::move(c));
      }
    }
    if (found)
      for (const auto &c : result.probes)
        if (c.btf && c.btf != kernel.btf()) {
          if (result.types && result.types != c.btf)
            throw Error("probes on functions of two modules (" + result.types->module() + ", " +
                            c.btf->module() + ") in one script are not supported",
                        probe.where);
          result.types = c.btf;
        }
    if (!found) {
      std::string message;
      if (probe.alternatives.size() == 1) {
        message = reasons[0];
        ProbeName name = parse_probe_name(probe.alternatives[0]);  // parsed once already
        if (!name.has_wildcard()) {
          auto near = nearest_names(probe.alternatives[0], candidate_names(name, kernel), 3);
          if (!near.empty()) {
            message += "; did you mean ";
            for (size_t i = 0; i < near.size(); i++)
              message += (i ? ", " : "") + near[i];
            message += "?";
          }
        }
      } else {
        message = "none of the probe's alternatives exists here: ";
        for (size_t i = 0; i < reasons.size(); i++)
          message += (i ? "; " : "") + reasons[i];
      }
      throw Error(message, probe.where);
    }
  }
  return result;
}

}  // namespace mt
