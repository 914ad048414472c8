// Reads tracepoint records and names from BTF: own classes, shared classes, syscalls.
#include "kernel/btf_trace_events.h"

#include <bpf/btf.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

namespace mt {

namespace {

std::string name_of(const struct btf *btf, const struct btf_type *t) {
  const char *n = btf__name_by_offset(btf, t->name_off);
  return n ? n : "";
}

// The first type id of a BTF's own, after its base's.
int first_own_id(const struct btf *btf) {
  const struct btf *base = btf__base_btf(btf);
  return base ? static_cast<int>(btf__type_cnt(base)) : 1;
}

// The BTFs to look in: vmlinux's, then each loaded module's.
std::vector<const KernelBtf *> all_of(const KernelBtf &btf) {
  std::vector<const KernelBtf *> out = {&btf};
  for (const auto &m : btf.modules())
    out.push_back(m.get());
  return out;
}

// The argument types of a probe prototype, without the leading `void *__data`.
std::vector<int> argument_types(const struct btf *btf, int proto_id) {
  std::vector<int> types;
  const struct btf_type *proto = btf__type_by_id(btf, proto_id);
  if (!proto || !btf_is_func_proto(proto))
    return types;
  const struct btf_param *p = btf_params(proto);
  for (int i = 1; i < btf_vlen(proto); i++)
    types.push_back(static_cast<int>(p[i].type));
  return types;
}

// Each class's probe (trace_event_raw_event_<class>) by its argument types.
using Classes = std::multimap<std::vector<int>, std::string>;
const Classes &classes_of(const KernelBtf &kbtf) {
  static std::mutex lock;
  static std::map<const KernelBtf *, Classes> cache;
  std::lock_guard hold(lock);
  auto [it, fresh] = cache.try_emplace(&kbtf);
  if (fresh) {
    const struct btf *btf = kbtf.raw();
    static const std::string prefix = "trace_event_raw_event_";
    for (int id = first_own_id(btf); id < (int)btf__type_cnt(btf); id++) {
      const struct btf_type *t = btf__type_by_id(btf, id);
      if (!btf_is_func(t))
        continue;
      std::string name = name_of(btf, t);
      if (name.rfind(prefix, 0) == 0)
        it->second.emplace(argument_types(btf, static_cast<int>(t->type)),
                           name.substr(prefix.size()));
    }
  }
  return it->second;
}

// Fields by name, offset and size: what a record's layout is.
std::vector<std::tuple<std::string, int, int>> layout_of(const TraceFormat &f) {
  std::vector<std::tuple<std::string, int, int>> out;
  for (const auto &x : f.fields)
    out.emplace_back(x.name, x.offset, x.size);
  return out;
}

// How like HINT's fields a record's are: fields of the same name, less
// those of only one of the two.
int likeness(const TraceFormat &f, const TraceFormat &hint) {
  std::set<std::string> names, in_hint;
  for (const auto &x : f.fields)
    names.insert(x.name);
  for (const auto &x : hint.fields)
    in_hint.insert(x.name);
  int score = 0;
  for (const auto &n : names)
    score += in_hint.count(n) ? 1 : -1;
  for (const auto &n : in_hint)
    score -= names.count(n) ? 0 : 1;
  return score;
}

// The record of EVENT defined on a shared class, from the classes of this
// BTF's own whose probe takes EVENT's argument types: the one laid out as
// HINT (the record the event has elsewhere), else the one most like it
// when only one is, else the longest whose name and '_' begin EVENT's
// (block_rq for block_rq_issue), else one when all are laid out alike (the
// only one, say). BTF tells no more, and a guess could be a wrong layout.
// Raw tracepoints with no event (sched_*_tp) have no record.
std::optional<TraceFormat> shared_class_format(const KernelBtf &kbtf, const std::string &event,
                                               const TraceFormat *hint) {
  const struct btf *btf = kbtf.raw();
  int id = btf__find_by_name_kind(btf, ("btf_trace_" + event).c_str(), BTF_KIND_TYPEDEF);
  if (id < first_own_id(btf) || (event.size() > 3 && event.ends_with("_tp")))
    return std::nullopt;
  const struct btf_type *ptr = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
  if (!ptr || !btf_is_ptr(ptr))
    return std::nullopt;
  auto [first, last] =
      classes_of(kbtf).equal_range(argument_types(btf, static_cast<int>(ptr->type)));
  std::optional<TraceFormat> named_by_prefix;
  size_t prefix_length = 0;
  std::vector<TraceFormat> candidates;
  for (auto it = first; it != last; ++it) {
    const std::string &c = it->second;
    auto f = kbtf.trace_event_format(c);
    if (!f)
      continue;
    if (event.rfind(c + "_", 0) == 0 && c.size() > prefix_length)
      named_by_prefix = f, prefix_length = c.size();
    candidates.push_back(std::move(*f));
  }
  std::optional<TraceFormat> chosen;
  if (hint) {
    for (const auto &c : candidates)
      if (!chosen && layout_of(c) == layout_of(*hint))
        chosen = c;
    int best = 0, at_best = 0;
    const TraceFormat *most_alike = nullptr;
    for (const auto &c : candidates) {
      int score = likeness(c, *hint);
      if (!most_alike || score > best)
        best = score, at_best = 0, most_alike = &c;
      at_best += score == best;
    }
    if (!chosen && most_alike && best > 0 && at_best == 1)
      chosen = *most_alike;
  }
  if (!chosen)
    chosen = named_by_prefix;
  bool alike = !candidates.empty();
  for (const auto &c : candidates)
    alike = alike && layout_of(c) == layout_of(candidates[0]);
  if (!chosen && alike)
    chosen = candidates[0];
  if (chosen)
    chosen->event = event;
  return chosen;
}

// The prefix of the functions the syscall table calls: __x64_sys_NAME on
// x86-64 (there, __ia32_sys_ ones are 32-bit only), __arm64_sys_NAME on
// arm64, else __se_sys_NAME.
std::string syscall_prefix(const KernelBtf &kbtf) {
  BtfSignature unused;
  for (const char *prefix : {"__x64_sys_", "__arm64_sys_"})
    if (kbtf.function_signature(std::string(prefix) + "read", unused))
      return prefix;
  return "__se_sys_";
}

// syscalls:sys_enter_NAME (the syscall number, then each argument in a
// slot of 8 bytes) and sys_exit_NAME (the number, then ret), for a
// syscall the kernel has. Its arguments are ABI, the same on every kernel
// that has it: HINT's where that is this event's record elsewhere, else
// from its __do_sys_ function (as declared) or __se_sys_ one (each a
// long); mostly both are inlined into the wrapper, which takes only
// registers: then they are not known.
std::optional<TraceFormat> syscall_format(const KernelBtf &kbtf, const std::string &event,
                                          const TraceFormat *hint) {
  bool enter = event.rfind("sys_enter_", 0) == 0;
  if (!enter && event.rfind("sys_exit_", 0) != 0)
    return std::nullopt;
  std::string name = event.substr(enter ? 10 : 9);
  BtfSignature signature;
  if (!kbtf.function_signature(syscall_prefix(kbtf) + name, signature))
    return std::nullopt;
  if (hint && hint->event == event)
    return *hint;
  TraceFormat format;
  format.event = event;
  TraceField nr;
  nr.type = "int";
  nr.name = "__syscall_nr";
  nr.offset = 8;
  nr.size = 4;
  nr.is_signed = true;
  format.fields.push_back(nr);
  if (!enter) {
    TraceField ret = nr;
    ret.type = "long";
    ret.name = "ret";
    ret.offset = 16;
    ret.size = 8;
    format.fields.push_back(ret);
    return format;
  }
  if (!kbtf.function_signature("__do_sys_" + name, signature) &&
      !kbtf.function_signature("__se_sys_" + name, signature))
    return std::nullopt;
  for (size_t i = 0; i < signature.params.size(); i++) {
    const BtfParam &p = signature.params[i];
    TraceField f = field_from_btf(kbtf.raw(), p.name, p.type_id, 16 + 8 * static_cast<int>(i));
    f.size = 8;
    format.fields.push_back(f);
  }
  return format;
}

}  // namespace

std::optional<TraceFormat> btf_trace_event_format(const KernelBtf &btf, const std::string &category,
                                                  const std::string &event,
                                                  const TraceFormat *hint) {
  std::optional<TraceFormat> format;
  if (category == "syscalls")
    format = syscall_format(btf, event, hint);
  for (const KernelBtf *in : all_of(btf)) {
    if (!format)
      format = in->trace_event_format(event);
    if (!format)
      format = shared_class_format(*in, event, hint);
  }
  if (format)
    format->category = category;
  return format;
}

std::vector<std::string> btf_tracepoint_names(const KernelBtf &btf,
                                              const std::vector<std::string> &known) {
  std::map<std::string, std::string> category_of;  // event -> category
  std::set<std::string> categories;
  for (const auto &full : known) {
    size_t colon = full.find(':');
    if (colon == std::string::npos)
      continue;
    category_of[full.substr(colon + 1)] = full.substr(0, colon);
    categories.insert(full.substr(0, colon));
  }
  auto category = [&](const std::string &event) -> std::string {
    if (auto it = category_of.find(event); it != category_of.end())
      return it->second;
    std::string best;
    for (const auto &c : categories)
      if (event.rfind(c + "_", 0) == 0 && c.size() > best.size())
        best = c;
    return best;
  };
  std::set<std::string> names;
  const std::string wrapper = syscall_prefix(btf);
  for (const KernelBtf *in : all_of(btf)) {
    const struct btf *raw = in->raw();
    for (int id = first_own_id(raw); id < (int)btf__type_cnt(raw); id++) {
      const struct btf_type *t = btf__type_by_id(raw, id);
      std::string n = name_of(raw, t);
      if (btf_is_typedef(t) && n.rfind("btf_trace_", 0) == 0) {
        std::string event = n.substr(10), c = category(event);
        if (!c.empty())
          names.insert(c + ":" + event);
      } else if (btf_is_func(t) && n.rfind(wrapper, 0) == 0) {
        names.insert("syscalls:sys_enter_" + n.substr(wrapper.size()));
        names.insert("syscalls:sys_exit_" + n.substr(wrapper.size()));
      }
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace mt
