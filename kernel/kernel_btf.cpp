// Loads kernel and module BTF, reads signatures, and emits C for the struct members used.
#include "kernel/kernel_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "bpf_headers/mt_abi.h"
#include "common/c_tokens.h"
#include "kernel/libbpf_messages.h"

namespace mt {

namespace {

std::string name_of(const struct btf *btf, const struct btf_type *t) {
  const char *n = btf__name_by_offset(btf, t->name_off);
  return n ? n : "";
}

bool signature_from_proto(const struct btf *btf, int proto_id, size_t skip, BtfSignature &out) {
  const struct btf_type *proto = btf__type_by_id(btf, proto_id);
  if (!proto || !btf_is_func_proto(proto))
    return false;
  out.return_type = proto->type;
  const struct btf_param *p = btf_params(proto);
  for (int i = 0; i < btf_vlen(proto); i++) {
    if (static_cast<size_t>(i) < skip)
      continue;
    const char *n = btf__name_by_offset(btf, p[i].name_off);
    out.params.push_back({n && *n ? n : "arg" + std::to_string(i - skip), (int)p[i].type});
  }
  return true;
}

}  // namespace

KernelBtf *KernelBtf::get() {
  static KernelBtf *instance = [] {
    keep_libbpf_messages();  // not printed
    struct btf *btf = btf__load_vmlinux_btf();
    KernelBtf *kbtf = btf ? new KernelBtf(btf) : nullptr;
    if (kbtf)
      kbtf->read_modules_from("/sys/kernel/btf");
    return kbtf;
  }();
  return instance;
}

KernelBtf::KernelBtf(struct btf *btf, std::string module) : btf_(btf), module_(std::move(module)) {
  if (const struct btf *base = btf__base_btf(btf))
    first_id_ = static_cast<int>(btf__type_cnt(base));
}

KernelBtf::~KernelBtf() {
  modules_.clear();  // split on this one
  btf_dump__free(dump_);
  btf__free(btf_);
}

void KernelBtf::add_module(std::unique_ptr<KernelBtf> module) {
  modules_.push_back(std::move(module));
}

const std::vector<std::unique_ptr<KernelBtf>> &KernelBtf::modules() const {
  if (modules_dir_.empty())
    return modules_;
  std::string dir = std::move(modules_dir_);
  modules_dir_.clear();
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name == "vmlinux" || !entry.is_regular_file(ec))
      continue;
    if (struct btf *split = btf__parse_split(entry.path().c_str(), btf_))
      modules_.push_back(std::make_unique<KernelBtf>(split, name));
  }
  return modules_;
}

const KernelBtf *KernelBtf::with_function(const std::string &function) const {
  if (function_id(function) > 0)
    return this;
  for (const auto &m : modules())
    if (m->function_id(function) > 0)
      return m.get();
  return nullptr;
}

const KernelBtf *KernelBtf::with_raw_tracepoint(const std::string &event) const {
  if (btf__find_by_name_kind(btf_, ("btf_trace_" + event).c_str(), BTF_KIND_TYPEDEF) > 0)
    return this;
  for (const auto &m : modules())
    if (btf__find_by_name_kind(m->btf_, ("btf_trace_" + event).c_str(), BTF_KIND_TYPEDEF) > 0)
      return m.get();
  return nullptr;
}

void KernelBtf::index_functions() const {
  if (!function_ids_.empty())
    return;
  for (int id = first_id_; id < (int)btf__type_cnt(btf_); id++) {
    const struct btf_type *t = btf__type_by_id(btf_, id);
    if (btf_is_func(t))
      function_ids_.emplace(name_of(btf_, t), id);  // the first, like libbpf's lookup
  }
}

int KernelBtf::function_id(const std::string &name) const {
  if (function_ids_.empty() && first_id_ == 1)
    return btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_FUNC);
  index_functions();  // a module's own functions, not its base's
  auto found = function_ids_.find(name);
  return found == function_ids_.end() ? -1 : found->second;
}

bool KernelBtf::function_signature(const std::string &function, BtfSignature &out) const {
  int id = function_id(function);
  if (id < 0)
    return false;
  return signature_from_proto(btf_, btf__type_by_id(btf_, id)->type, 0, out);
}

namespace {

bool record_has_member(const struct btf *btf, const struct btf_type *record,
                       const std::string &member) {
  const struct btf_member *m = btf_members(record);
  for (int i = 0; i < btf_vlen(record); i++, m++) {
    const char *name = btf__name_by_offset(btf, m->name_off);
    if (name && name == member)
      return true;
    if (name && *name)
      continue;
    const struct btf_type *anonymous = btf__type_by_id(btf, btf__resolve_type(btf, m->type));
    if (anonymous && btf_is_composite(anonymous) && record_has_member(btf, anonymous, member))
      return true;
  }
  return false;
}

}  // namespace

std::optional<int64_t> KernelBtf::enum_value(const std::string &name,
                                             const std::string &enumerator) const {
  for (int kind : {int(BTF_KIND_ENUM), int(BTF_KIND_ENUM64)}) {
    int id = btf__find_by_name_kind(btf_, name.c_str(), kind);
    if (id <= 0)
      continue;
    const struct btf_type *t = btf__type_by_id(btf_, id);
    for (int i = 0; i < btf_vlen(t); i++) {
      bool is_64 = btf_is_enum64(t);
      const char *n =
          btf__name_by_offset(btf_, is_64 ? btf_enum64(t)[i].name_off : btf_enum(t)[i].name_off);
      if (n && n == enumerator)
        return is_64 ? static_cast<int64_t>(btf_enum64_value(btf_enum64(t) + i))
                     : static_cast<int64_t>(btf_enum(t)[i].val);
    }
  }
  for (const auto &module : modules())
    if (auto value = module->enum_value(name, enumerator))
      return value;
  return std::nullopt;
}

bool KernelBtf::has_member(const std::string &kind, const std::string &name,
                           const std::string &member) const {
  int id = btf__find_by_name_kind(btf_, name.c_str(),
                                  kind == "union" ? BTF_KIND_UNION : BTF_KIND_STRUCT);
  if (id > 0)
    return record_has_member(btf_, btf__type_by_id(btf_, id), member);
  for (const auto &module : modules())
    if (module->has_member(kind, name, member))
      return true;
  return false;
}

bool KernelBtf::raw_tracepoint_signature(const std::string &event, BtfSignature &out) const {
  // The __bpf_trace_ function has the argument names; the typedef only types.
  int fn = function_id("__bpf_trace_" + event);
  if (fn > 0)
    return signature_from_proto(btf_, btf__type_by_id(btf_, fn)->type, 1, out);
  int id = btf__find_by_name_kind(btf_, ("btf_trace_" + event).c_str(), BTF_KIND_TYPEDEF);
  if (id < 0)
    return false;
  const struct btf_type *ptr = btf__type_by_id(btf_, btf__type_by_id(btf_, id)->type);
  if (!ptr || !btf_is_ptr(ptr))
    return false;
  return signature_from_proto(btf_, ptr->type, 1, out);  // skips `void *__data`
}

// A tracepoint field as tracefs would describe it, from a BTF member.
TraceField field_from_btf(const struct btf *btf, const std::string &name, int type_id, int offset) {
  TraceField f;
  f.name = name;
  f.offset = offset;
  long size = btf__resolve_size(btf, type_id);
  f.size = size > 0 ? static_cast<int>(size) : 0;
  if (f.name.rfind("__data_loc_", 0) == 0) {
    f.name = f.name.substr(11);
    f.type = "__data_loc char[]";
    f.data_loc = true;
    return f;
  }
  int tid = type_id;
  for (const struct btf_type *t = btf__type_by_id(btf, tid);
       t && (btf_is_mod(t) || btf_is_typedef(t)); t = btf__type_by_id(btf, tid))
    tid = t->type;
  const struct btf_type *t = btf__type_by_id(btf, tid);
  if (!t) {
    f.type = "u" + std::to_string(f.size * 8);
  } else if (btf_is_array(t)) {
    f.array_len = static_cast<int>(btf_array(t)->nelems);
    const struct btf_type *elem = btf__type_by_id(btf, btf_array(t)->type);
    f.type = elem && btf_is_int(elem) && elem->size == 1 ? "char" : "u8";
  } else if (btf_is_ptr(t)) {
    const struct btf_type *pt = btf__type_by_id(btf, t->type);
    while (pt && btf_is_mod(pt))
      pt = btf__type_by_id(btf, pt->type);
    std::string pointee = pt && btf_is_struct(pt)                 ? "struct " + name_of(btf, pt)
                          : pt && btf_is_int(pt) && pt->size == 1 ? "char"
                                                                  : "void";
    f.type = pointee + " *";
  } else if (btf_is_int(t)) {
    f.is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
    f.type = btf_int_encoding(t) & BTF_INT_BOOL ? "bool" : f.is_signed ? "int" : "unsigned";
  } else {
    f.is_signed = btf_is_enum(t);
    f.type = "u" + std::to_string(f.size * 8);
  }
  return f;
}

std::optional<TraceFormat> KernelBtf::trace_event_format(const std::string &event) const {
  int id = btf__find_by_name_kind(btf_, ("trace_event_raw_" + event).c_str(), BTF_KIND_STRUCT);
  if (id < 0)
    return std::nullopt;
  TraceFormat format;
  format.event = event;
  const struct btf_type *t = btf__type_by_id(btf_, id);
  const struct btf_member *m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); i++) {
    const char *n = btf__name_by_offset(btf_, m[i].name_off);
    std::string name = n ? n : "";
    if (name.empty() || name == "ent" || name == "__data")
      continue;
    TraceField f =
        field_from_btf(btf_, name, m[i].type, static_cast<int>(btf_member_bit_offset(t, i) / 8));
    if (f.size > 0)
      format.fields.push_back(f);
  }
  return format;
}

std::vector<std::string> KernelBtf::function_names() const {
  index_functions();
  std::vector<std::string> names;
  names.reserve(function_ids_.size());
  for (const auto &[name, id] : function_ids_)
    names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> KernelBtf::raw_tracepoint_names() const {
  index_functions();  // for the __bpf_trace_<event> lookups
  std::vector<std::string> names;
  for (int id = first_id_; id < (int)btf__type_cnt(btf_); id++) {
    const struct btf_type *t = btf__type_by_id(btf_, id);
    std::string n = name_of(btf_, t);
    if (btf_is_typedef(t) && n.rfind("btf_trace_", 0) == 0)
      names.push_back(n.substr(10));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string KernelBtf::type_name(int type_id) const {
  if (type_id == 0)
    return "void";
  if (!dump_) {
    auto append = [](void *ctx, const char *fmt, va_list args) {
      va_list copy;
      va_copy(copy, args);
      int n = std::vsnprintf(nullptr, 0, fmt, copy);
      va_end(copy);
      if (n <= 0)
        return;
      auto *text = static_cast<std::string *>(ctx);
      size_t old = text->size();
      text->resize(old + n + 1);
      std::vsnprintf(text->data() + old, n + 1, fmt, args);
      text->resize(old + n);
    };
    dump_ = btf_dump__new(btf_, append, &dumped_, nullptr);
    if (!dump_)
      return "?";
  }
  dumped_.clear();
  LIBBPF_OPTS(btf_dump_emit_type_decl_opts, opts, .field_name = "");
  if (btf_dump__emit_type_decl(dump_, type_id, &opts) < 0)
    return "?";
  // An anonymous struct, union or enum prints its whole body; keep one line.
  size_t body = dumped_.find('{'), body_end = dumped_.rfind('}');
  if (body != std::string::npos && body_end != std::string::npos)
    dumped_.replace(body, body_end - body + 1, "{...}");
  return dumped_;
}

std::string c_int_type(int size, bool is_signed) {
  switch (size) {
    case 1: return is_signed ? "__s8" : "__u8";
    case 2: return is_signed ? "__s16" : "__u16";
    case 4: return is_signed ? "__s32" : "__u32";
    case 16: return is_signed ? "__int128" : "unsigned __int128";
    default: return is_signed ? "__s64" : "__u64";
  }
}

CTypeEmitter::CTypeEmitter(const struct btf *btf, std::set<std::string> used_members)
    : btf_(btf), used_members_(std::move(used_members)) {}

int CTypeEmitter::skip_modifiers(int id) const {
  for (;;) {
    const struct btf_type *t = btf__type_by_id(btf_, id);
    if (!t || !(btf_is_mod(t) || btf_is_typedef(t) || btf_is_type_tag(t)))
      return id;
    id = t->type;
  }
}

std::string CTypeEmitter::declare(int type_id, const std::string &name) {
  int id = skip_modifiers(type_id);
  const struct btf_type *t = btf__type_by_id(btf_, id);
  auto spaced = [&](const std::string &type) { return name.empty() ? type : type + " " + name; };
  if (id == 0 || !t)
    return spaced("void");
  if (btf_is_int(t))
    return spaced(btf_int_bits(t) == 1 || btf_int_encoding(t) & BTF_INT_BOOL ? "bool"
                  : btf_int_encoding(t) & BTF_INT_CHAR
                      ? "char"
                      : c_int_type(t->size, btf_int_encoding(t) & BTF_INT_SIGNED));
  if (btf_is_any_enum(t))
    return spaced(c_int_type(t->size, btf_is_enum(t) ? true : btf_kflag(t)));
  if (btf_is_float(t))
    return spaced(t->size == 4 ? "float" : "double");
  if (btf_is_ptr(t)) {
    int target = skip_modifiers(t->type);
    const struct btf_type *pt = btf__type_by_id(btf_, target);
    if (pt && btf_is_func_proto(pt))
      return spaced("void *");
    if (pt && (btf_is_composite(pt) || btf_is_fwd(pt))) {
      // Pointed-to records are defined only when the script names members.
      std::string kind =
          btf_is_union(pt) || (btf_is_fwd(pt) && btf_kflag(pt)) ? "union " : "struct ";
      std::string rec = name_of(btf_, pt);
      if (rec.empty() || btf_is_fwd(pt))
        return spaced("void *");
      define_record(target);
      return kind + rec + " *" + name;
    }
    return declare(t->type, "*" + name);
  }
  if (btf_is_array(t)) {
    const struct btf_array *a = btf_array(t);
    return declare(a->type, name + "[" + std::to_string(a->nelems) + "]");
  }
  if (btf_is_composite(t)) {
    std::string rec = define_record(id);
    return spaced(rec);
  }
  return spaced("void *");
}

std::string CTypeEmitter::define_record(int id) {
  auto known = record_names_.find(id);
  if (known != record_names_.end())
    return known->second;
  const struct btf_type *t = btf__type_by_id(btf_, id);
  std::string kind = btf_is_union(t) ? "union" : "struct";
  std::string name = name_of(btf_, t);
  if (name.empty())
    name = "__mt_anon_" + std::to_string(id);
  std::string full = kind + " " + name;
  record_names_[id] = full;
  forward_.insert(full + ";");
  // Members of anonymous inner records are lifted into this record, at
  // their offsets in it.
  struct Placed {
    std::string name, declaration;
    uint32_t offset;
    int type;
  };
  std::vector<Placed> placed;
  std::vector<std::tuple<const struct btf_type *, uint32_t>> stack{{t, 0}};
  while (!stack.empty()) {
    auto [rt, base_bits] = stack.back();
    stack.pop_back();
    const struct btf_member *m = btf_members(rt);
    for (int i = 0; i < btf_vlen(rt); i++) {
      uint32_t bits = base_bits + btf_member_bit_offset(rt, i);
      std::string mname = btf__name_by_offset(btf_, m[i].name_off);
      if (mname.empty()) {
        int inner = skip_modifiers(m[i].type);
        const struct btf_type *it = btf__type_by_id(btf_, inner);
        if (it && btf_is_composite(it))
          stack.push_back({it, bits});
        continue;
      }
      if (!used_members_.count(mname) || btf_member_bitfield_size(rt, i) || bits % 8)
        continue;
      placed.push_back({mname, declare(m[i].type, mname), bits / 8, int(m[i].type)});
    }
  }
  // The kernel's layout, exactly: each member in a struct of its own that
  // pads it to its offset (packed where the kernel's offset is not aligned
  // for it), all of them over the record's size in a packed union, and the
  // record aligned as the kernel's (packed kernel structs, such as struct
  // bvec_iter, are aligned on 1 and sized to no multiple of their
  // members'). No CO-RE relocation is left for libbpf to resolve at each
  // load (a search of the kernel's types, 1 ms each): the object is
  // compiled for this kernel, and the asserts check the layout.
  std::string body = "    __u8 __mt_size[" + std::to_string(t->size) + "];\n", checks;
  for (size_t i = 0; i < placed.size(); i++) {
    const Placed &p = placed[i];
    int align = btf__align_of(btf_, p.type);
    std::string pad =
        p.offset ? "__u8 __mt_at_" + std::to_string(i) + "[" + std::to_string(p.offset) + "]; "
                 : "";
    body += "    struct { " + pad + p.declaration + "; }" +
            (align > 0 && p.offset % align == 0 ? "" : " __attribute__((packed))") + ";\n";
    checks += "_Static_assert(__builtin_offsetof(" + full + ", " + p.name +
              ") == " + std::to_string(p.offset) + ", \"" + full + " " + p.name + "\");\n";
  }
  checks += "_Static_assert(sizeof(" + full + ") == " + std::to_string(t->size) + ", \"" + full +
            "\");\n";
  int record_align = std::max(1, btf__align_of(btf_, id));
  checks += "_Static_assert(_Alignof(" + full + ") == " + std::to_string(record_align) + ", \"" +
            full + "\");\n";
  definitions_.push_back(
      full + " {\n  union {\n" + body + "  } __attribute__((packed));\n} __attribute__((aligned(" +
      std::to_string(record_align) + "), annotate(MT_KERNEL_RECORD)));\n" + checks);
  return full;
}

bool CTypeEmitter::declare_record(const std::string &kind, const std::string &name) {
  int id = btf__find_by_name_kind(btf_, name.c_str(),
                                  kind == "union" ? BTF_KIND_UNION : BTF_KIND_STRUCT);
  if (id <= 0)
    return false;
  define_record(id);
  return true;
}

std::string CTypeEmitter::definitions() const {
  std::string out;
  for (const auto &f : forward_)
    out += f + "\n";
  // Members are pointers or were defined first (declare() recursed into
  // them before the enclosing definition was pushed), so order is right.
  for (const auto &d : definitions_)
    out += d;
  // Each record's id in the kernel's BTF, for bpf_rdonly_cast
  // (mt_helpers.h): a CO-RE relocation would make libbpf search for it.
  if (record_names_.empty())
    return out;
  out += "#undef MT_KERNEL_TYPE_ID\n#define MT_KERNEL_TYPE_ID(T) _Generic((T *)0";
  for (const auto &[id, record] : record_names_)
    out += ", " + record + " *: " + std::to_string(id);
  out += ", default: __builtin_btf_type_id(*(T *)0, 1))\n";
  return out;
}

std::set<std::string> member_names_in(const std::vector<std::string> &expressions) {
  std::set<std::string> names;
  for (const auto &e : expressions)
    for (const CIdentifier &id : c_identifiers(e))
      if (id.member)
        names.insert(id.name);
  return names;
}

std::set<std::pair<std::string, std::string>> record_names_in(
    const std::vector<std::string> &expressions) {
  std::set<std::pair<std::string, std::string>> names;
  for (const auto &e : expressions)
    for (const CIdentifier &id : c_identifiers(e))
      if (id.previous == "struct" || id.previous == "union")
        names.insert({id.previous, id.name});
  return names;
}

}  // namespace mt
