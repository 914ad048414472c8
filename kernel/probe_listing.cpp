// Lists the tracepoints, kprobes and BTF probes matching a glob, with arguments if verbose.
#include "kernel/probe_listing.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "common/error.h"
#include "kernel/elf_functions.h"
#include "kernel/kernel_btf.h"
#include "kernel/probe_resolver.h"
#include "kernel/usdt_notes.h"

namespace mt {

ProbePattern::ProbePattern(std::string glob) : glob_(std::move(glob)) {
  std::string prefix = glob_.substr(0, glob_.find(':'));
  if (prefix.size() == glob_.size())
    return;
  for (const ProbeKindInfo &k : probe_kinds())
    if (prefix == k.name)
      kind_ = prefix;
}

bool ProbePattern::matches(const std::string &probe) const {
  if (glob_.empty() || glob_match(glob_, probe))
    return true;
  size_t colon = probe.find(':');
  return colon != std::string::npos && glob_match(glob_, probe.substr(colon + 1));
}

bool ProbePattern::may_match_kind(ProbeKind kind) const {
  return kind_.empty() || kind_ == kind_name(kind);
}

bool ProbePattern::names_kind(ProbeKind kind) const {
  return !kind_.empty() && kind_ == kind_name(kind);
}

namespace {

// uprobe:PATH:GLOB (or uretprobe:..., or their short names): the kind and
// PATH, else nothing.
std::optional<ProbeName> uprobe_pattern(const std::string &pattern) {
  try {
    ProbeName name = parse_probe_name(pattern);
    if (probe_kind(name.kind).source == TargetSource::Binary)
      return name;
  } catch (const Error &) {
  }
  return std::nullopt;
}

struct Listed {
  std::string text;  // e.g. tracepoint:io_uring:io_uring_complete
  ProbeName name;
  std::vector<std::string> usdt_argument_types;  // -lv of a USDT probe
};

// usdt:PATH:GLOB (GLOB against PROVIDER:NAME, or against NAME alone when it
// has no ':'): PATH's USDT probes that match.
std::vector<Listed> usdt_probes(const std::string &pattern) {
  size_t kind_end = pattern.find(':');
  if (kind_end == std::string::npos)
    return {};
  const ProbeKindInfo *kind = nullptr;
  for (const ProbeKindInfo &k : probe_kinds())
    if (k.source == TargetSource::UsdtNotes &&
        (pattern.compare(0, kind_end, k.name) == 0 ||
         (k.alias[0] && pattern.compare(0, kind_end, k.alias[0]) == 0)))
      kind = &k;
  size_t path_end = pattern.find(':', kind_end + 1);
  if (!kind || path_end == std::string::npos)
    return {};
  std::string path = pattern.substr(kind_end + 1, path_end - kind_end - 1);
  std::string glob = pattern.substr(path_end + 1);
  std::vector<Listed> out;
  for (const auto &note : usdt_notes(path)) {
    // Provider and name are C identifiers (usdt_notes() reads no other).
    std::string probe = note.provider + ":" + note.name;
    if (!glob_match(glob, probe) &&
        !(glob.find(':') == std::string::npos && glob_match(glob, note.name)))
      continue;
    ProbeName name{kind->kind, note.provider, path, note.name, 0};
    out.push_back({name.to_string(), std::move(name), note.argument_types()});
  }
  return out;
}

void print_signature(const KernelBtf &btf, const BtfSignature &signature, bool with_retval,
                     std::FILE *out) {
  for (const auto &p : signature.params)
    std::fprintf(out, "    %s %s\n", btf.type_name(p.type_id).c_str(), p.name.c_str());
  if (with_retval && signature.return_type != 0)
    std::fprintf(out, "    %s retval\n", btf.type_name(signature.return_type).c_str());
}

// The arguments a script sees as args.NAME, one per line, like bpftrace -lv.
void print_arguments(const ProbeName &name, KernelFacts &kernel, std::FILE *out) {
  TargetSource source = probe_kind(name.kind).source;
  if (source != TargetSource::TracefsEvents && source != TargetSource::BtfRawTracepoints &&
      source != TargetSource::BtfFunctions)
    return;  // a file's probes: USDT's are printed as they are listed
  if (source == TargetSource::TracefsEvents) {
    auto format = kernel.tracepoint(name.category, name.target);
    if (!format)
      return;
    for (const auto &f : format->fields) {
      std::fprintf(out, "    %s %s", f.type.c_str(), f.name.c_str());
      if (f.array_len)
        std::fprintf(out, "[%d]", f.array_len);
      std::fputc('\n', out);
    }
    return;
  }
  const KernelBtf *kernel_btf = kernel.btf();
  if (!kernel_btf)
    return;
  BtfSignature signature;
  if (source == TargetSource::BtfRawTracepoints) {
    const KernelBtf *btf = kernel_btf->with_raw_tracepoint(name.target);
    if (btf && btf->raw_tracepoint_signature(name.target, signature))
      print_signature(*btf, signature, false, out);
  } else if (const KernelBtf *btf = kernel_btf->with_function(name.target);
             btf && btf->function_signature(name.target, signature)) {
    print_signature(*btf, signature, true, out);
  }
}

}  // namespace

size_t list_probes(const std::string &pattern, bool verbose, KernelFacts &kernel, std::FILE *out) {
  ProbePattern match(pattern);
  std::vector<Listed> listed;
  auto add = [&](ProbeKind kind, std::string category, std::string target) {
    ProbeName name{kind, std::move(category), std::move(target), "", 0};
    std::string text = name.to_string();
    if (match.matches(text))
      listed.push_back({std::move(text), std::move(name)});
  };

  // Without root tracefs is unreadable and the tracepoints unknown.
  bool tracepoints_hidden = false;
  // vmlinux's BTF, then each loaded module's: read once, when a kind needs it.
  std::vector<const KernelBtf *> btfs;
  auto all_btfs = [&, read = false]() mutable -> const std::vector<const KernelBtf *> & {
    if (!read) {
      read = true;
      if (const KernelBtf *btf = kernel.btf()) {
        btfs.push_back(btf);
        for (const auto &m : btf->modules())
          btfs.push_back(m.get());
      }
    }
    return btfs;
  };
  // uprobe:PATH:GLOB lists the functions PATH defines.
  if (auto file = uprobe_pattern(pattern))
    for (auto &function : elf_function_names(file->target)) {
      // A name is printed as it is: one that could drive a terminal is not.
      if (!std::all_of(function.begin(), function.end(),
                       [](unsigned char c) { return c > 32 && c < 127; }))
        continue;
      ProbeName name{file->kind, "", file->target, std::move(function), 0};
      if (glob_match(file->symbol, name.symbol))
        listed.push_back({name.to_string(), std::move(name)});
    }
  for (auto &probe : usdt_probes(pattern))
    listed.push_back(std::move(probe));
  for (const ProbeKindInfo &k : probe_kinds()) {
    if (k.listed == ListedFrom::Nothing || !match.may_match_kind(k.kind))
      continue;
    size_t before = listed.size();
    switch (k.listed) {
      case ListedFrom::Nothing: break;
      case ListedFrom::TracefsEvents:
        tracepoints_hidden = !kernel.tracefs_readable();
        for (const auto &full : kernel.tracepoint_names()) {
          size_t colon = full.find(':');
          if (colon != std::string::npos)
            add(k.kind, full.substr(0, colon), full.substr(colon + 1));
        }
        break;
      case ListedFrom::KprobeFunctions:
        for (auto &function : kernel.kprobe_function_names())
          add(k.kind, "", std::move(function));
        break;
      case ListedFrom::BtfRawTracepoints:
        for (const KernelBtf *b : all_btfs())
          for (const auto &event : b->raw_tracepoint_names())
            add(k.kind, "", event);
        break;
      case ListedFrom::BtfFunctions:
        for (const KernelBtf *b : all_btfs())
          for (const auto &function : b->function_names())
            add(k.kind, "", function);
        break;
    }
    // A kind this kernel cannot run lists nothing. Asked only when something
    // matched: for fentry it loads a test program.
    if (listed.size() > before && !kind_unavailable(k.kind, kernel).empty())
      listed.resize(before);
  }

  // Nothing of a kind the pattern names, on a kernel that cannot run it:
  // that is why, not that nothing matched (known only where tracefs is
  // readable: elsewhere kprobes look absent).
  if (listed.empty() && kernel.tracefs_readable())
    for (const ProbeKindInfo &k : probe_kinds())
      if (k.listed != ListedFrom::Nothing && match.names_kind(k.kind))
        if (std::string why = kind_unavailable(k.kind, kernel); !why.empty())
          throw Error("no probes match '" + pattern + "': " + why);
  if (tracepoints_hidden) {
    const char *why = "tracepoints are not listed: tracefs is readable by root only";
    if (listed.empty())
      throw Error("no probes match '" + pattern + "'; " + why);
    std::fprintf(stderr, "moontrace: %s\n", why);
  }

  std::sort(listed.begin(), listed.end(),
            [](const Listed &a, const Listed &b) { return a.text < b.text; });
  listed.erase(std::unique(listed.begin(), listed.end(),
                           [](const Listed &a, const Listed &b) { return a.text == b.text; }),
               listed.end());
  for (const auto &probe : listed) {
    std::fprintf(out, "%s\n", probe.text.c_str());
    for (size_t i = 0; verbose && i < probe.usdt_argument_types.size(); i++)
      std::fprintf(out, "    %s arg%zu\n", probe.usdt_argument_types[i].c_str(), i);
    if (verbose)
      print_arguments(probe.name, kernel, out);
  }
  return listed.size();
}

}  // namespace mt
