// Answers the resolver's questions about another kernel from its BTF files.
#include "kernel/btf_file_facts.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "kernel/btf_trace_events.h"
#include "kernel/libbpf_messages.h"
#include "kernel/tracefs_format.h"

namespace mt {

namespace {

// Why BTF read from a file cannot be used, or "": every type it names
// exists, and no chain of typedefs, modifiers and pointers loops (the
// readers follow them). The kernel's own BTF is checked by the kernel.
std::string btf_problem(const struct btf *btf) {
  const unsigned count = btf__type_cnt(btf);
  const struct btf *base = btf__base_btf(btf);
  auto bad = [&](unsigned id) { return id >= count; };
  for (unsigned id = base ? btf__type_cnt(base) : 1; id < count; id++) {
    const struct btf_type *t = btf__type_by_id(btf, id);
    if (!t)
      return "type " + std::to_string(id) + " is missing";
    bool refers = btf_is_mod(t) || btf_is_typedef(t) || btf_is_ptr(t) || btf_is_func(t) ||
                  btf_is_func_proto(t) || btf_is_var(t) || btf_is_decl_tag(t);
    if (refers && bad(t->type))
      return "type " + std::to_string(id) + " names a type that does not exist";
    if (btf_is_array(t) && (bad(btf_array(t)->type) || bad(btf_array(t)->index_type)))
      return "array " + std::to_string(id) + " names a type that does not exist";
    if (btf_is_composite(t))
      for (int i = 0; i < btf_vlen(t); i++)
        if (bad(btf_members(t)[i].type))
          return "a member of type " + std::to_string(id) + " names a type that does not exist";
    if (btf_is_func_proto(t))
      for (int i = 0; i < btf_vlen(t); i++)
        if (bad(btf_params(t)[i].type))
          return "a parameter of type " + std::to_string(id) + " names a type that does not exist";
    // Longer chains than any compiler makes: a loop.
    const struct btf_type *at = t;
    for (int depth = 0; at && (btf_is_mod(at) || btf_is_typedef(at) || btf_is_ptr(at)); depth++) {
      if (depth > 64)
        return "type " + std::to_string(id) + " refers to itself";
      at = btf__type_by_id(btf, at->type);
    }
  }
  return "";
}

}  // namespace

BtfFileFacts::BtfFileFacts(const std::string &path) {
  struct stat st;
  bool dir = stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  std::string vmlinux = dir ? path + "/vmlinux" : path;
  // Only a regular file is read: a FIFO or a device could block or never end.
  if (stat(vmlinux.c_str(), &st) != 0)
    throw Error("--btf " + vmlinux + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error("--btf " + vmlinux + ": not a regular file");
  keep_libbpf_messages();  // not printed
  // A raw BTF file (/sys/kernel/btf/vmlinux's copy) or an ELF vmlinux.
  struct btf *raw = btf__parse(vmlinux.c_str(), nullptr);
  if (!raw) {
    char why[128];  // libbpf's own errors (4001: not ELF) are past strerror's
    libbpf_strerror(errno, why, sizeof why);
    throw Error("--btf " + vmlinux + ": not a BTF file (" + why +
                "); give a copy of /sys/kernel/btf/vmlinux, or a directory like /sys/kernel/btf");
  }
  btf_ = std::make_unique<KernelBtf>(raw);
  if (std::string why = btf_problem(raw); !why.empty())
    throw Error("--btf " + vmlinux + ": damaged BTF: " + why);
  if (dir) {
    btf_->read_modules_from(path);
    for (const auto &m : btf_->modules())
      if (std::string why = btf_problem(m->raw()); !why.empty())
        throw Error("--btf " + path + "/" + m->module() + ": damaged BTF: " + why);
  }
}

std::optional<TraceFormat> BtfFileFacts::tracepoint(const std::string &category,
                                                    const std::string &event) {
  // The record this kernel has for the event, where it has one, settles
  // what BTF leaves open: a shared class, a syscall's arguments.
  std::optional<TraceFormat> here;
  if (KernelFacts::tracefs_readable())
    here = read_trace_format(category, event);
  return btf_trace_event_format(*btf_, category, event, here ? &*here : nullptr);
}

std::vector<std::string> BtfFileFacts::tracepoint_names() {
  return btf_tracepoint_names(*btf_, list_tracepoints());
}

bool BtfFileFacts::has_function(const std::string &name) const {
  return btf_->with_function(name) != nullptr;
}

bool BtfFileFacts::has_kprobes() {
  return has_function("register_kprobe");
}

std::vector<std::string> BtfFileFacts::kprobe_function_names() {
  return btf_->function_names();
}

std::string BtfFileFacts::fentry_unavailable_reason() {
  if (!has_function("bpf_trampoline_link_prog"))
    return "the kernel has no BPF trampolines (CONFIG_BPF_JIT)";
  if (!has_function("register_ftrace_direct") && !has_function("register_ftrace_direct_multi"))
    return "the kernel has no ftrace direct calls (CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)";
  return "";
}

}  // namespace mt
