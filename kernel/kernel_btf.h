// The running kernel's BTF: function signatures for kprobe/fentry/tp_btf
// arguments, and C definitions of just the struct members a script uses.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel/tracefs_format.h"

struct btf;
struct btf_dump;

namespace mt {

struct BtfParam {
  std::string name;
  int type_id = 0;
};

struct BtfSignature {
  std::vector<BtfParam> params;
  int return_type = 0;  // 0: void
};

class KernelBtf {
 public:
  // Loaded on first use from /sys/kernel/btf/vmlinux; nullptr if absent.
  // Loaded modules' BTF (/sys/kernel/btf/MODULE) is read when a name is
  // not in vmlinux's.
  static KernelBtf *get();
  // Takes ownership of `btf`. A module's BTF is split on vmlinux's: its
  // type ids continue the base's, so it describes the types of both.
  explicit KernelBtf(struct btf *btf, std::string module = "");
  ~KernelBtf();
  KernelBtf(const KernelBtf &) = delete;
  KernelBtf &operator=(const KernelBtf &) = delete;

  const struct btf *raw() const { return btf_; }
  const std::string &module() const { return module_; }  // "" for vmlinux
  // A module's BTF, split on this one (tests build their own; the kernel's
  // are read from `dir`/MODULE on first need).
  void add_module(std::unique_ptr<KernelBtf> module);
  void read_modules_from(std::string dir) { modules_dir_ = std::move(dir); }
  // The BTF that has `function` (or raw tracepoint `event`): this one, a
  // loaded module's, or nullptr.
  const KernelBtf *with_function(const std::string &function) const;
  const KernelBtf *with_raw_tracepoint(const std::string &event) const;
  // The loaded modules' BTF.
  const std::vector<std::unique_ptr<KernelBtf>> &modules() const;
  bool function_signature(const std::string &function, BtfSignature &out) const;
  // The value of ENUMERATOR in `enum NAME`, here or in a module's BTF.
  std::optional<int64_t> enum_value(const std::string &name, const std::string &enumerator) const;
  // Whether `struct NAME` (`kind` "struct") or `union NAME` has a member
  // called `member`, directly or in an anonymous struct or union in it.
  bool has_member(const std::string &kind, const std::string &name,
                  const std::string &member) const;
  // tp_btf / raw tracepoint arguments, from the btf_trace_<event> typedef.
  bool raw_tracepoint_signature(const std::string &event, BtfSignature &out) const;
  // A tracepoint's record from struct trace_event_raw_<event>, for when
  // tracefs cannot be read.
  std::optional<TraceFormat> trace_event_format(const std::string &event) const;
  // Both index every function first: their callers tend to look many of
  // the names up next, and libbpf's lookup by name is a linear scan.
  std::vector<std::string> function_names() const;
  std::vector<std::string> raw_tracepoint_names() const;
  // The C spelling of a type as the kernel source has it, typedefs kept:
  // "struct file *", "size_t", "const char *".
  std::string type_name(int type_id) const;

 private:
  int function_id(const std::string &name) const;  // -1 if absent
  void index_functions() const;

  struct btf *btf_;
  std::string module_;
  int first_id_ = 1;  // the first type id of this BTF's own (after a base's)
  mutable std::vector<std::unique_ptr<KernelBtf>> modules_;
  mutable std::string modules_dir_;                            // read once, then cleared
  mutable std::unordered_map<std::string, int> function_ids_;  // once indexed
  mutable struct btf_dump *dump_ = nullptr;                    // created by the first type_name()
  mutable std::string dumped_;                                 // what dump_ printed
};

// Turns BTF types into C declarations. Structs are emitted with only the
// members whose names the script mentions, each at its offset in this
// kernel's layout, and marked MT_KERNEL_RECORD (mt_abi.h).
class CTypeEmitter {
 public:
  CTypeEmitter(const struct btf *btf, std::set<std::string> used_members);
  // "struct file *file", registering what the declaration needs.
  std::string declare(int type_id, const std::string &name);
  // Defines the kernel's `struct NAME` (or union), for a script that casts
  // a pointer to it; false if the kernel has no such record.
  bool declare_record(const std::string &kind, const std::string &name);
  // Definitions of every struct and union declared so far, in dependency
  // order, and MT_KERNEL_TYPE_ID(T), each one's id in the kernel's BTF.
  std::string definitions() const;

 private:
  std::string define_record(int type_id);
  int skip_modifiers(int type_id) const;

  const struct btf *btf_;
  std::set<std::string> used_members_;
  std::map<int, std::string> record_names_;  // type id -> emitted name
  std::set<std::string> forward_;            // "struct x;" lines
  std::vector<std::string> definitions_;     // complete definitions, ordered
  std::set<int> defining_;
};

// A tracepoint field as tracefs would describe it, from a BTF member of
// type TYPE_ID at byte OFFSET.
TraceField field_from_btf(const struct btf *btf, const std::string &name, int type_id, int offset);

// The fixed-width C type of an integer of `size` bytes, e.g. __s32.
std::string c_int_type(int size, bool is_signed);

// Identifier-like tokens that follow '.' or '->' in C expressions.
std::set<std::string> member_names_in(const std::vector<std::string> &expressions);
// The records expressions name as "struct NAME" or "union NAME": (kind, name).
std::set<std::pair<std::string, std::string>> record_names_in(
    const std::vector<std::string> &expressions);

}  // namespace mt
