// Refuses objects with foreign programs, non-tracing sections or disallowed kernel calls.
#include "compiler/tracing_policy.h"

#include <elf.h>

#include <map>
#include <optional>
#include <set>

#include "common/embedded_files.h"
#include "common/error.h"
#include "compiler/bpf_elf.h"
#include "compiler/btf_line_info.h"
#include "compiler/helper_policy.h"
#include "compiler/instruction_scan.h"
#include "kernel/probe_kinds.h"

namespace mt {

namespace {

constexpr const char *kRemedy = "(run with --unsafe to allow it)";

// Sections libbpf loads as the program types the engine generates: the
// probe kinds' own.
bool tracing_section(const std::string &name) {
  for (const ProbeKindInfo &kind : probe_kinds())
    if (*kind.section && name.rfind(kind.section, 0) == 0)
      return true;
  return false;
}

// Kernel functions a script may call: bpf_rdonly_cast retypes a pointer
// for reading; the number iterator's count mt_for's steps, where the
// generator found a kernel that verifies them soundly and set the C up for
// them (uses_number_iterator, never read from the C, which holds the
// script's text: 6.4 to 6.6 accepted some unsafe iterator loops).
bool tracing_kfunc(const std::string &name, bool iterators) {
  static const std::set<std::string> iterator = {"bpf_iter_num_new", "bpf_iter_num_next",
                                                 "bpf_iter_num_destroy"};
  return name == "bpf_rdonly_cast" || (iterators && iterator.count(name));
}

// Each program's section as the generated C gives it: SEC("S") int NAME(.
std::map<std::string, std::string> sections_in(const std::string &c) {
  std::map<std::string, std::string> out;
  for (size_t at = 0; (at = c.find("SEC(\"", at)) != std::string::npos;) {
    size_t from = at + 5, to = c.find('"', from);
    if (to == std::string::npos)
      break;
    std::string section = c.substr(from, to - from);
    at = to;
    size_t p = c.find_first_not_of(") \n\t", to + 1);
    if (p == std::string::npos || c.compare(p, 4, "int ") != 0)
      continue;
    size_t name_end = c.find('(', p + 4);
    if (name_end != std::string::npos)
      out[c.substr(p + 4, name_end - p - 4)] = section;
  }
  return out;
}

// What the headers #define NAME as, or NAME.
std::string defined_as(const std::string &name) {
  for (const auto &header : kBpfHeaders) {
    std::string text = header.content, define = "#define " + name + " ";
    size_t at = text.find(define);
    if (at == std::string::npos)
      continue;
    size_t from = text.find_first_not_of(' ', at + define.size());
    size_t to = text.find_first_of(" \t\n", from);
    return text.substr(from, to - from);
  }
  return name;
}

class Checker {
 public:
  Checker(std::string_view object, const GeneratedProgram &generated, const Declaration &decl)
      : elf_(object), generated_(generated), decl_(decl) {
    engine_programs_.insert(generated.follow_programs.begin(), generated.follow_programs.end());
    engine_programs_.insert(generated.flush_program);
    engine_programs_.insert(generated.naming_programs.begin(), generated.naming_programs.end());
    for (const auto &p : generated.probes)
      engine_programs_.insert(p.attached_program);
    sections_ = sections_in(generated.source);
    iterators_ = generated.uses_number_iterator;
    // The engine's own programs in its headers, named by macros of its ABI
    // (#define MT_FLUSH_STAGE mt_flush_stage).
    for (const auto &header : kBpfHeaders)
      for (const auto &[name, section] : sections_in(std::string(header.content)))
        sections_[defined_as(name)] = section;
  }

  void check_programs() {
    for (const ElfSection &section : elf_.sections()) {
      if (!section.executable() || section.name == ".text")
        continue;
      for (const ElfSymbol &sym : elf_.symbols()) {
        if (sym.section != section.index || sym.type != STT_FUNC)
          continue;
        if (!engine_programs_.count(sym.name))
          refuse("the script's C defines a BPF program of its own, '" + sym.name +
                     "' in section \"" + section.name + "\"; only moontrace's probes may load",
                 section.name, uint32_t(sym.value));
        if (!tracing_section(section.name))
          refuse("the script's C moves the program " + sym.name + " to section \"" + section.name +
                     "\", which does not trace",
                 section.name, uint32_t(sym.value));
        // An object not compiled here (a package's) must attach where its
        // C says: the section names the probe.
        auto said = sections_.find(sym.name);
        if (said == sections_.end() || said->second != section.name)
          refuse("the object puts the program " + sym.name + " in section \"" + section.name +
                     "\", where the C it was compiled from has \"" +
                     (said == sections_.end() ? "none" : said->second) + "\"",
                 section.name, uint32_t(sym.value));
      }
    }
  }

  void check_calls() {
    for (const KernelCall &call : scan_kernel_calls(elf_)) {
      switch (call.kind) {
        case KernelCall::Kind::Helper:
          if (!helper_allowed(call.id))
            refuse(describe_helper(call.id) + " is not allowed in a script; it can only trace",
                   call.section, call.offset);
          break;
        case KernelCall::Kind::Kfunc:
          // Only retype a pointer for plain loads, which the verifier
          // guards (the engine's reads of kernel numbers), or count a
          // loop's steps (mt_for).
          if (tracing_kfunc(call.symbol, iterators_))
            break;
          refuse(
              (call.symbol.empty() ? "a call of kernel function BTF id " + std::to_string(call.id)
                                   : "the kernel function " + call.symbol) +
                  " (a kfunc) is not allowed in a script; it can only call tracing helpers",
              call.section, call.offset);
          break;
        case KernelCall::Kind::HandMade:
          refuse("a hand-made BPF instruction (src_reg " + std::to_string(call.id) +
                     ") is not allowed in a script",
                 call.section, call.offset);
          break;
      }
    }
  }

 private:
  static std::string describe_helper(long id) {
    std::string name = helper_name(id);
    if (name.rfind("bpf_", 0) == 0)
      return name + " (helper " + std::to_string(id) + ")";
    return "BPF " + name;
  }

  // The script line of the instruction, else the probe whose program holds
  // it, else nothing.
  [[noreturn]] void refuse(const std::string &message, const std::string &section,
                           uint32_t offset) {
    std::string text = message + " " + kRemedy;
    if (!line_info_)
      line_info_.emplace(elf_);
    if (auto line = line_info_->find(section, offset); line && script_file(line->file))
      throw Error(text, {script_name(line->file), line->line, 0});
    if (const ProbeDecl *probe = probe_of(section, offset))
      throw Error(probe_label_ + ": " + text, probe->where);
    throw Error(text);
  }

  // Whether a line-info file name is one of the script's files (not the
  // generated scaffolding or an engine header).
  bool script_file(const std::string &file) const { return !script_name(file).empty(); }

  // The name the script's declaration uses for a line-info file name,
  // which Clang may have made absolute; "" when it is no script file.
  std::string script_name(const std::string &file) const {
    for (const auto &probe : decl_.probes) {
      const std::string &name = probe.where.file;
      if (name.empty())
        continue;
      if (file == name || (file.size() > name.size() &&
                           file.compare(file.size() - name.size(), name.size(), name) == 0 &&
                           file[file.size() - name.size() - 1] == '/'))
        return name;
    }
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".lua") == 0)
      return file;  // a module's expression
    return "";
  }

  const ProbeDecl *probe_of(const std::string &section, uint32_t offset) {
    std::string program;
    for (const ElfSymbol &sym : elf_.symbols()) {
      const ElfSection *s =
          sym.section < elf_.sections().size() ? &elf_.sections()[sym.section] : nullptr;
      if (s && s->name == section && sym.type == STT_FUNC && offset >= sym.value &&
          offset < sym.value + sym.size)
        program = sym.name;
    }
    for (const auto &p : generated_.probes)
      if (p.attached_program == program && p.decl_id >= 0 &&
          size_t(p.decl_id) < decl_.probes.size()) {
        probe_label_ = p.probe_name;
        return &decl_.probes[p.decl_id];
      }
    return nullptr;
  }

  ElfObject elf_;
  const GeneratedProgram &generated_;
  const Declaration &decl_;
  std::set<std::string> engine_programs_;
  bool iterators_ = false;                       // the C uses the kernel's number iterator
  std::map<std::string, std::string> sections_;  // program -> section, from the C
  std::optional<BtfLineInfo> line_info_;
  std::string probe_label_;
};

}  // namespace

void check_tracing_only(std::string_view object, const GeneratedProgram &generated,
                        const Declaration &decl) {
  Checker checker(object, generated, decl);
  checker.check_programs();
  checker.check_calls();
}

}  // namespace mt
