// Writes a declaration's BPF C: kernel types, params, maps and one program per resolved probe.
// Over 500 lines: ProbeWriter, writing each probe's program and its maps, is ~400 lines alone.
#include "codegen/c_generator.h"

#include <bpf/btf.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "bpf_headers/mt_abi.h"
#include "codegen/program_parts.h"
#include "common/c_tokens.h"
#include "common/error.h"

namespace mt {

namespace {

struct Builtin {
  const char *name;
  const char *file_scope;  // declaration used only inside typeof()
  const char *local;       // definition at the top of a probe function
  // The same where pointers are read directly (tp_btf, fentry), if other.
  const char *direct_local = nullptr;
};

const Builtin kBuiltins[] = {
    // From the program's one read of bpf_get_current_pid_tgid()
    // (__pid_tgid), which its target check and records share.
    {"pid", "extern __u32 pid;", "__u32 pid = __pid_tgid >> 32;"},
    {"tid", "extern __u32 tid;", "__u32 tid = (__u32)__pid_tgid;"},
    {"uid", "extern __u32 uid;", "__u32 uid = (__u32)bpf_get_current_uid_gid();"},
    {"gid", "extern __u32 gid;", "__u32 gid = bpf_get_current_uid_gid() >> 32;"},
    {"nsecs", "extern __u64 nsecs;", "__u64 nsecs = bpf_ktime_get_ns();"},
    {"cpu", "extern __u32 cpu;", "__u32 cpu = bpf_get_smp_processor_id();"},
    {"cgroup", "extern __u64 cgroup;", "__u64 cgroup = bpf_get_current_cgroup_id();"},
    // The current task, typed: followed with CO-RE reads, or directly
    // where the program may (the helper's pointer is then the kernel's own).
    {"task", "extern struct task_struct *task;",
     "struct task_struct *task = (struct task_struct *)bpf_get_current_task();",
     "struct task_struct *task = bpf_get_current_task_btf();"},
    // Zeroed first: what follows the name's NUL must not tell equal names apart in keys.
    {"comm", "extern char comm[16];",
     "char comm[16]; __builtin_memset(comm, 0, sizeof(comm)); bpf_get_current_comm(comm, "
     "sizeof(comm));"},
};

// The task's pid and tgid where the target check needs them (-p/-c), else
// 0 until a probe needs them, which then reads them under
// !mt_filter_targets: the verifier keeps at most one of the two helper
// calls, on the one path the flag leaves (a branch on the value itself
// would double the paths after it).
constexpr const char *kTaskForTargets =
    "  __u64 __pid_tgid = mt_filter_targets ? bpf_get_current_pid_tgid() : 0;\n";

// First in each probe's program: after the stop, it does nothing.
constexpr const char *kUnlessStopped = "  if (mt_run_stopped())\n    return 0;\n";

// A comment line of generated C holding names a script or a binary gave
// (paths, probe and map names): it cannot end early or span lines, so
// what they hold never becomes C.
std::string comment(std::string text) {
  for (size_t at = 0; (at = text.find("*/", at)) != std::string::npos;)
    text.replace(at, 2, "* /");
  for (char &c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
  return "/* " + text + " */\n";
}

// Whether a probe draws a point of a flow (of a given kind, or any).
bool draws_flow(const ProbeDecl &p, bool begins_count = true) {
  return std::any_of(p.draws.begin(), p.draws.end(), [&](const DrawDecl &d) {
    return !d.flow.empty() && (begins_count || d.flow_point != DrawDecl::Flow::Begin);
  });
}

// Identifiers in `text` that are not member names (not after . or ->)
// nor tags (`struct pid` names no builtin).
std::set<std::string> free_identifiers(const std::string &text) {
  std::set<std::string> ids;
  for (const CIdentifier &id : c_identifiers(text))
    if (!id.member && id.previous != "struct" && id.previous != "union" && id.previous != "enum")
      ids.insert(id.name);
  return ids;
}

bool declared_signed(const std::string &type) {
  static const std::set<std::string> names = {
      "int",     "long",  "short",  "char",  "signed char", "long long", "s8",
      "s16",     "s32",   "s64",    "__s8",  "__s16",       "__s32",     "__s64",
      "ssize_t", "pid_t", "loff_t", "off_t", "time64_t"};
  std::string t = type;
  if (t.rfind("const ", 0) == 0)
    t = t.substr(6);
  return names.count(t) > 0;
}

// A #line directive: the file name as a C string literal, which Clang
// reads back unescaped (a script's path may hold quotes, backslashes or
// newlines).
std::string line_directive(int line, const std::string &file) {
  std::string out = "#line " + std::to_string(line) + " \"";
  for (unsigned char c : file) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char octal[5];  // three digits always: an octal escape ends there
      std::snprintf(octal, sizeof(octal), "\\%03o", c);
      out += octal;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"\n";
}

// Collects C text and counts its physical lines, so that the #line
// directive after each script expression restores generated numbering.
class Emitter {
 public:
  // `first_line`: the number of the first line; `built` collects
  // expressions not found in the script's text (see GeneratedProgram).
  explicit Emitter(int first_line = 1,
                   std::map<std::pair<std::string, int>, std::string> *built = nullptr)
      : line_(first_line), built_(built) {}

  Emitter &operator<<(const std::string &text) {
    for (char c : text)
      line_ += c == '\n';
    out_ += text;
    return *this;
  }
  // Places a script expression at its script line and column.
  void expression(const Expression &e) {
    if (built_ && e.where.line > 0 && e.where.column == 0)
      built_->emplace(std::make_pair(e.where.file, e.where.line), e.text);
    *this << "\n";
    if (e.where.line > 0)
      *this << line_directive(e.where.line, e.where.file) +
                   std::string(e.where.column > 1 ? e.where.column - 1 : 0, ' ');
    *this << e.text + "\n";
    *this << line_directive(line_ + 1, kGeneratedFileName);
  }
  std::string str() const { return out_; }

 private:
  std::string out_;
  int line_;  // line being written, as #line directives number it
  std::map<std::pair<std::string, int>, std::string> *built_;
};

std::string trace_field_decl(const TraceField &f, CTypeEmitter *types, const KernelBtf *btf) {
  if (f.data_loc)
    return "__u32 " + f.name;  // use mt_data_loc() or capture it as a string
  if (f.array_len > 0) {
    bool chars = f.type.find("char") != std::string::npos;
    int elem = f.size / f.array_len;
    return (chars ? std::string("char") : c_int_type(elem, f.is_signed)) + " " + f.name + "[" +
           std::to_string(f.array_len) + "]";
  }
  if (f.type.find('*') != std::string::npos) {
    std::string base = f.type.substr(0, f.type.find('*'));
    while (!base.empty() && base.back() == ' ')
      base.pop_back();
    if (base.rfind("const ", 0) == 0)
      base = base.substr(6);
    if (base == "char")
      return "const char *" + f.name;
    if (types && btf && base.rfind("struct ", 0) == 0) {
      int id = btf__find_by_name_kind(btf->raw(), base.substr(7).c_str(), BTF_KIND_STRUCT);
      if (id > 0)
        return types->declare(id, "*" + f.name);
    }
    return "void *" + f.name;
  }
  if (f.type == "bool")
    return "bool " + f.name;
  return c_int_type(f.size, f.is_signed || declared_signed(f.type)) + " " + f.name;
}

// The program of the probes sharing a tracepoint, the first of them FIRST.
std::string shared_program_name(size_t first) {
  return "mt_shared_" + std::to_string(first);
}

// A BTF-defined map, as libbpf reads it.
std::string map_definition(const std::string &name, const std::string &type, uint32_t size,
                           const std::string &key, const std::string &value,
                           const std::string &flags = "") {
  return "struct {\n  __uint(type, " + type + ");\n  __uint(max_entries, " + std::to_string(size) +
         ");\n" + (flags.empty() ? "" : "  __uint(map_flags, " + flags + ");\n") +
         "  __type(key, " + key + ");\n  __type(value, " + value + ");\n} " + name +
         " SEC(\".maps\") MT_SHARED;\n";
}

// The key as the stop probe computes it.
const std::vector<Capture> &stop_key(const LatencyDecl &lat) {
  return lat.stop_key.empty() ? lat.key : lat.stop_key;
}

// Whether a pair is keyed by the thread alone, at both ends.
bool keyed_by_thread(const LatencyDecl &lat) {
  auto is_tid = [](const std::vector<Capture> &key) {
    return key.size() == 1 && !key[0].is_string && key[0].stack == StackKind::None &&
           key[0].c_type.empty() && key[0].expr.text == "tid";
  };
  return is_tid(lat.key) && is_tid(stop_key(lat));
}

// Every script expression a probe's program contains.
std::vector<const Expression *> expressions_of(const Declaration &decl, const ProbeDecl &probe) {
  std::vector<const Expression *> out = {&probe.guard, &probe.predicate, &probe.action};
  auto add = [&](const std::vector<Capture> &captures) {
    for (const auto &c : captures)
      out.push_back(&c.expr);
  };
  add(probe.captures);
  for (int id : probe.aggregations) {
    add(decl.aggregations[id].keys);
    out.push_back(&decl.aggregations[id].value);
  }
  if (probe.latency_start >= 0)
    add(decl.latencies[probe.latency_start].key);
  if (probe.latency_stop >= 0)
    add(stop_key(decl.latencies[probe.latency_stop]));
  if (probe.latency_start >= 0)
    add(decl.latencies[probe.latency_start].carry);
  return out;
}

// Whether the verifier gives each of these programs' functions a stack of
// its own, so that mt_flush may be a global function (mt_runtime.h) whose
// frame takes none of the stack a probe's keys need: from 6.13, with
// x86-64's JIT, unless a program makes a tail call.
bool private_stacks(const KernelBtf *btf, const Declaration &decl) {
  if (!btf || !btf->enum_value("priv_stack_mode", "PRIV_STACK_ADAPTIVE") ||
      !btf->has_member("struct", "pt_regs", "r15"))
    return false;
  for (const auto &probe : decl.probes)
    for (const Expression *e : expressions_of(decl, probe))
      if (e->text.find("bpf_tail_call") != std::string::npos)
        return false;
  return true;
}

// The map reads of mt_aggregate.h, as expressions of their type only.
const std::pair<const char *, const char *> kMapReadTypes[] = {
    {"map_get", "(m, k) (*(m).value)"},
    {"map_ptr", "(m, k) ((m).value)"},
    {"map_has", "(m, k) ((bool)0)"},
};

// u8..u64 and s8..s64 as the kernel spells them; other C types as written.
std::string c_type(const std::string &type) {
  static const std::set<std::string> short_names = {"u8", "u16", "u32", "u64",
                                                    "s8", "s16", "s32", "s64"};
  return short_names.count(type) ? "__" + type : type;
}

// The type of a leading cast to a scalar, "(u32)x" -> "__u32"; "" if the
// expression does not start with one. A capture so written has that type,
// so it may name the action's locals, which typeof() at file scope cannot.
std::string leading_cast_type(const std::string &expr) {
  static const std::regex cast(R"(^\s*\(\s*((?:(?:unsigned|signed|long|short|int|char|bool|)"
                               R"(__[us](?:8|16|32|64)|[us](?:8|16|32|64))\s*)+)\))");
  std::smatch m;
  if (!std::regex_search(expr, m, cast))
    return "";
  std::string type = std::regex_replace(m[1].str(), std::regex(R"(\s+$)"), "");
  return c_type(type);
}

const char *const kArgRegs[] = {"di", "si", "dx", "cx", "r8", "r9"};

class ProbeWriter {
 public:
  ProbeWriter(const GeneratorInput &in, CTypeEmitter *types, Emitter &out)
      : in_(in), types_(types), out_(out) {
    // Tracing programs reach task storage from 5.12, which moved it into
    // task_struct.
    thread_storage_ =
        in.btf &&
        std::any_of(in.decl->latencies.begin(), in.decl->latencies.end(), keyed_by_thread) &&
        in.btf->has_member("struct", "task_struct", "bpf_storage");
  }

  // `shared`: another probe is on the same tracepoint, so this one is a
  // function that one program calls for all of them (write_shared()).
  // SHARED_PROGRAM: the program of a tracepoint this probe shares
  // (write_shared()), which compiles its function; "" for a program of its own.
  GeneratedProbe write(size_t index, const ResolvedProbe &rp, const std::string &shared_program) {
    const ProbeDecl &decl = in_.decl->probes[rp.decl_id];
    bool shared = !shared_program.empty();
    std::string n = std::to_string(index);
    GeneratedProbe gp;
    gp.decl_id = rp.decl_id;
    gp.program = gp.attached_program = "mt_probe_" + n;
    gp.name = rp.name;
    gp.probe_name = rp.name.to_string();
    const ProbeKindInfo &kind = probe_kind(rp.name.kind);
    bool reads_user = kind.user_memory;
    bool record_context = kind.context == ProgramContext::TracepointRecord;

    out_ << "\n" + comment(gp.probe_name + " (" + decl.where.file + ":" +
                           std::to_string(decl.where.line) + ")");
    // Arguments: a struct named after the probe; `args` names it both in
    // the function and, for typeof() of captures, at file scope.
    std::string args_struct = "struct mt_args_" + n;
    std::string retval_type;
    std::vector<std::string> arg_inits;
    out_ << args_struct + " {\n";
    if (record_context) {
      int offset = 0;  // the common_* fields become padding
      for (const auto &f : rp.format->fields) {
        if (f.offset > offset)
          out_ << "  __u8 __pad_" + std::to_string(offset) + "[" +
                      std::to_string(f.offset - offset) + "];\n";
        out_ << "  " + trace_field_decl(f, types_, in_.btf) + ";\n";
        offset = f.offset + f.size;
      }
    } else if (rp.has_signature) {
      for (size_t i = 0; i < rp.signature.params.size() && kind.sees_arguments; i++) {
        const BtfParam &p = rp.signature.params[i];
        out_ << "  " + types_->declare(p.type_id, p.name) + ";\n";
        std::string src = kind.context == ProgramContext::Registers
                              ? (i < 6 ? std::string("__ctx->") + kArgRegs[i] : std::string("0"))
                              : "__ctx[" + std::to_string(i) + "]";
        arg_inits.push_back("(typeof(args." + p.name + "))" + src);
      }
      if (kind.retval != ReturnValue::None && rp.signature.return_type)
        retval_type = types_->declare(rp.signature.return_type, "");
    } else if (kind.source == TargetSource::UsdtNotes) {
      // Typed by the probe's note; found where libbpf's spec says (mt_usdt.h).
      for (size_t i = 0; i < rp.usdt_argument_types.size(); i++) {
        const std::string &type = rp.usdt_argument_types[i];
        out_ << "  " + type + " arg" + std::to_string(i) + ";\n";
        arg_inits.push_back("(" + type + ")mt_usdt_arg(__ctx, " + std::to_string(i) + ")");
      }
    } else if (kind.context == ProgramContext::Registers) {
      // Untyped (a uprobe's binary): the argument registers as numbers.
      for (int i = 0; i < 6 && kind.sees_arguments; i++) {
        out_ << "  __u64 arg" + std::to_string(i) + ";\n";
        arg_inits.push_back(std::string("__ctx->") + kArgRegs[i]);
      }
      if (kind.retval != ReturnValue::None)
        retval_type = "__u64";
    }
    if (arg_inits.empty() && !record_context)
      out_ << "  __u8 __none;\n";
    out_ << "};\n";

    std::string ctx_type = record_context                              ? args_struct + " *"
                           : kind.context == ProgramContext::Registers ? "struct mt_pt_regs *"
                                                                       : "__u64 *";
    std::string retval_src = kind.retval == ReturnValue::AfterArguments
                                 ? "__ctx[" + std::to_string(rp.signature.params.size()) + "]"
                                 : "__ctx->ax";

    // Types built from the probe's expressions: the record sent to user
    // space, and the keys of the aggregations and latency pairs it feeds
    // first. `args` and `retval` name file-scope stand-ins for typeof().
    // A drawing without arguments still sends its time and thread.
    bool sends = !decl.captures.empty() || decl.has_handler || !decl.draws.empty();
    // They are macros only inside typeof(), so members may share their
    // names (a capture of `retval` is a member `retval`).
    out_ << "extern " + args_struct + " __mt_targs_" + n + ";\n";
    stand_ins_ = {{"args", "__mt_targs_" + n}};
    if (!retval_type.empty()) {
      out_ << "extern " + retval_type + " __mt_tretval_" + n + ";\n";
      stand_ins_.push_back({"retval", "__mt_tretval_" + n});
    }
    // A pair's start probe is declared, so generated, before its stop.
    if (decl.latency_stop >= 0)
      stand_ins_.push_back({"start", "__mt_start_" + std::to_string(decl.latency_stop)});
    if (sends) {
      gp.record = "mt_rec_" + n;
      // Drawn events carry their time and thread for the trace file.
      write_struct(gp.record, rp, decl.captures,
                   decl.draws.empty() ? "  __u32 __probe;\n"
                                      : "  __u32 __probe;\n  __u64 __ts;\n  __u64 __task;\n");
      // Keeps the record's type in the object's BTF for the decoder.
      out_ << "struct " + gp.record + " *__mt_type_" + n + " __attribute__((unused)) MT_SHARED;\n";
    }
    for (int id : {decl.latency_start, decl.latency_stop})
      if (id >= 0 && defined_latencies_.insert(id).second)
        write_latency_map(in_.decl->latencies[id], rp);
    for (int id : decl.aggregations)
      if (defined_aggregations_.insert(id).second)
        write_aggregation_map(in_.decl->aggregations[id], rp);
    stand_ins_.clear();

    // The program, or a function of the program shared with other probes.
    // -p/-c and --cgroup: a pair's stop is filtered by its start, and a flow's step or
    // end by its begin, whichever task it runs in: a block request a
    // traced process issued completes in an interrupt or a kworker.
    bool flows = draws_flow(decl), follows = draws_flow(decl, false);
    bool filtered = decl.latency_stop < 0 && !follows;
    if (shared)
      out_ << program_guard_open(shared_program) + "static __always_inline int " + gp.program +
                  "(" + ctx_type + "__ctx, bool __target, __u64 __pid_tgid) {\n";
    else
      out_ << program_guard_open(gp.program) + "SEC(\"" + section(rp) + "\")\nint " + gp.program +
                  "(" + ctx_type + "__ctx) {\n" + kUnlessStopped;
    // The task's pid and tgid (__pid_tgid), read once: by the target
    // check under -p/-c (kTaskForTargets; a shared program's probes are
    // handed its), else where first needed.
    enum { Unread, ReadForTargets, Read } task_ids = shared ? ReadForTargets : Unread;
    auto read_task = [&] {
      if (task_ids == Unread)
        out_ << "  __u64 __pid_tgid = bpf_get_current_pid_tgid();\n";
      else if (task_ids == ReadForTargets)
        out_ << "  if (!mt_filter_targets)\n    __pid_tgid = bpf_get_current_pid_tgid();\n";
      task_ids = Read;
    };
    auto check_target = [&] {
      if (!shared && (flows || filtered)) {
        out_ << kTaskForTargets;
        task_ids = ReadForTargets;
      }
      if (!shared && flows)
        out_ << "  bool __target = mt_is_target_task(__pid_tgid);\n";
      if (filtered)
        out_ << (shared || flows ? "  if (!__target)\n    return 0;\n"
                                 : "  if (!mt_is_target_task(__pid_tgid))\n    return 0;\n");
    };
    // Without a guard the target check comes first: a USDT probe's args
    // cost helper calls to build, in every process.
    bool guarded = !decl.guard.text.empty();
    if (!guarded)
      check_target();
    if (record_context) {
      out_ << "#define args (*__ctx)\n";
    } else {
      out_ << "  " + args_struct + " args = {";
      for (size_t i = 0; i < arg_inits.size(); i++)
        out_ << (i ? ", " : "") + arg_inits[i];
      out_ << "};\n  (void)args;\n";
    }
    if (!retval_type.empty())
      out_ << "  " + retval_type + " retval = (" + retval_type + ")" + retval_src +
                  ";\n  (void)retval;\n";
    if (reads_user)
      out_ << "#define MT_PROBE_READ bpf_probe_read_user\n#define MT_DIRECT_LOADS 0\n";
    else
      out_ << "#define MT_PROBE_READ bpf_probe_read_kernel\n"
              "#define MT_DIRECT_LOADS MT_HAVE_RDONLY_CAST\n";
    if (guarded) {
      write_guard(decl);
      check_target();
    }

    std::set<std::string> used;
    for (const Expression *e : expressions_of(*in_.decl, decl))
      for (const auto &id : free_identifiers(e->text)) {
        used.insert(id);
        if (id == "latency" && decl.latency_stop < 0)
          throw Error("'latency' is known only in the stop probe of a latency pair", e->where);
      }
    // One clock read for the latency, the drawn time and nsecs, so that a
    // slice drawn from them starts exactly at its start probe.
    bool timed = decl.latency_start >= 0 || decl.latency_stop >= 0 || !decl.draws.empty();
    // Read once the filter passed, unless a stop or the filter needs it: a
    // read costs about as much as a map lookup, and of the probes sharing a
    // tracepoint most filter the event out.
    bool clock_first =
        decl.latency_stop >= 0 || free_identifiers(decl.predicate.text).count("nsecs");
    auto read_clock = [&] {
      if (timed)
        out_ << "  __u64 __now = bpf_ktime_get_ns();\n";
      if (used.count("nsecs"))
        out_ << (timed ? "  __u64 nsecs = __now;\n" : "  __u64 nsecs = bpf_ktime_get_ns();\n");
    };
    if (clock_first)
      read_clock();
    if (used.count("task") && reads_user)
      throw Error(
          "task is the kernel's task_struct, which a uprobe cannot follow (it reads the "
          "traced program's memory): use task in a kernel probe",
          decl.where);
    if (used.count("pid") || used.count("tid"))
      read_task();
    for (const auto &b : kBuiltins)
      if (used.count(b.name) && std::string(b.name) != "nsecs")
        out_ << "  " +
                    std::string(b.direct_local && rp.name.has_direct_btf_access() ? b.direct_local
                                                                                  : b.local) +
                    "\n";
    // A stop matches and removes its start before any filter: the request
    // is over whether or not it is counted.
    if (decl.latency_stop >= 0) {
      const LatencyDecl &lat = in_.decl->latencies[decl.latency_stop];
      std::string id = std::to_string(lat.id), map = latency_map_name(lat.id);
      std::string key = latency_key("__lk", lat, stop_key(lat), rp, reads_user);
      out_ << "  struct " + map + MT_MAP_VALUE_TYPE_SUFFIX " start;\n  __u64 latency;\n";
      out_ << "  if (!mt_latency_stop(&" + map + ", " + key + ", " + id +
                  ", &start, sizeof(start), __now, &latency))\n    return 0;\n  (void)start;\n";
    }
    if (!decl.predicate.text.empty()) {
      out_ << "  if (!(";
      out_.expression(decl.predicate);
      out_ << "))\n    return 0;\n";
    }
    if (!clock_first)
      read_clock();
    // Not in a block of its own: locals the action declares are there for
    // the drawn values after it (flow ids, tracks, durations).
    if (!decl.action.text.empty())
      out_.expression(decl.action);
    if (flows)
      write_flow_marks(decl, decl.latency_stop < 0 && follows);
    // A start after its action: the action may drop the event, and what is
    // carried may name its locals.
    if (decl.latency_start >= 0) {
      const LatencyDecl &lat = in_.decl->latencies[decl.latency_start];
      std::string id = std::to_string(lat.id), map = latency_map_name(lat.id);
      std::string key = latency_key("__sk", lat, lat.key, rp, reads_user);
      out_ << "  struct " + map +
                  MT_MAP_VALUE_TYPE_SUFFIX
                  " __sv;\n"
                  "  __builtin_memset(&__sv, 0, sizeof(__sv));\n";
      for (const auto &c : lat.carry)
        write_capture(rp, c, reads_user, "__sv.");
      out_ << "  mt_latency_start(&" + map + ", " + key + ", &__sv, sizeof(__sv), __now, " + id +
                  ");\n";
    }
    for (int id : decl.aggregations)
      write_aggregation_update(in_.decl->aggregations[id], decl, rp, reads_user);
    if (sends) {
      out_ << "  struct mt_stage *__stage;\n  struct " + gp.record + " *__r = mt_reserve(" + n +
                  ", sizeof(*__r), &__stage);\n";
      out_ << "  if (!__r)\n    return 0;\n  __r->__probe = " + n + ";\n";
      if (!decl.draws.empty()) {
        read_task();
        out_ << "  __r->__ts = __now;\n  __r->__task = __pid_tgid;\n";
      }
      for (const auto &c : decl.captures)
        write_capture(rp, c, reads_user, "__r->");
      out_ << "  mt_submit(__stage, sizeof(*__r));\n";
    }
    out_ << "  return 0;\n}\n";
    if (record_context)
      out_ << "#undef args\n";
    out_ << "#undef MT_PROBE_READ\n#undef MT_DIRECT_LOADS\n";
    out_ << kProgramGuardClose;
    return gp;
  }

  // The guard comes before the builtins are read: it may name the probe's
  // args and retval, params, maps and constants, but not what costs a
  // helper call to know, nor a pair's start.
  void write_guard(const ProbeDecl &decl) {
    for (const auto &id : free_identifiers(decl.guard.text)) {
      bool builtin = id == "start" || id == "latency";
      for (const auto &b : kBuiltins)
        builtin |= id == b.name;
      if (builtin)
        throw Error("a guard is tested before '" + id +
                        "' is known: test it in the filter (a guard sees args, retval, params "
                        "and maps)",
                    decl.guard.where);
    }
    out_ << "  if (!(";
    out_.expression(decl.guard);
    out_ << "))\n    return 0;\n";
  }

  // -p/-c: an event that steps or ends a marked flow goes on in any task,
  // when `follows_only`; one that goes on (traced, a pair's stop, or so
  // followed) marks the flows it begins, and an end clears its mark
  // (mt_flow_marks.h).
  void write_flow_marks(const ProbeDecl &decl, bool follows_only) {
    auto capture = [&](const std::string &name) -> const Expression & {
      for (const auto &c : decl.captures)
        if (c.name == name)
          return c.expr;
      throw Error("moontrace bug: no capture " + name, decl.where);
    };
    // The drawing's flow id in __fid, and its `when` as a condition.
    auto each_flow = [&](bool begins, const std::function<void(DrawDecl::Flow)> &body) {
      for (const auto &d : decl.draws) {
        if (d.flow.empty() || (d.flow_point == DrawDecl::Flow::Begin) != begins)
          continue;
        out_ << "    {\n      __u64 __fid = (__u64)(";
        out_.expression(capture(d.flow));
        out_ << ");\n      if (";
        if (d.when.empty())
          out_ << "1";
        else
          out_.expression(capture(d.when));
        out_ << ")\n";
        body(d.flow_point);
        out_ << "    }\n";
      }
    };
    out_ << "  if (mt_filter_targets || mt_cgroup_id) {\n    bool __followed = " +
                std::string(decl.latency_stop >= 0 ? "1" : "0") + ";\n";
    // An end closes its mark wherever it runs; a step only needs it outside.
    each_flow(false, [&](DrawDecl::Flow point) {
      out_ << (point == DrawDecl::Flow::End
                   ? "        __followed |= mt_flow_followed(__fid, 1);\n"
                   : "        __followed |= !__target && mt_flow_followed(__fid, 0);\n");
    });
    if (follows_only)
      out_ << "    if (!__target && !__followed)\n      return 0;\n";
    each_flow(true, [&](DrawDecl::Flow) {
      out_ << "        if (__target || __followed)\n          mt_flow_begun(__fid);\n";
    });
    out_ << "    (void)__followed;\n  }\n";
  }

  // One program for the probes `shared` names (indexes into `probes`), all
  // on the same tracepoint: each runs in turn, whatever the others did, so
  // the event costs one program run and one target lookup.
  void write_shared(std::vector<GeneratedProbe> &probes, const std::vector<size_t> &shared,
                    const ResolvedProbe &rp) {
    std::string name = shared_program_name(shared[0]);
    out_ << "\n" + comment(rp.name.to_string() + ": " + std::to_string(shared.size()) +
                           " probes in declaration order");
    out_ << program_guard_open(name) + "SEC(\"" + section(rp) + "\")\nint " + name +
                "(void *__ctx) {\n" + kUnlessStopped;
    // Kept in a byte of the stack, which the verifier reads back as any
    // value: told the answer, it would walk each probe after the first
    // once for a target and once not (uring's four probes on
    // io_uring_complete: 11,984 instructions to verify under -c, 7,128 so).
    out_ << std::string(kTaskForTargets) +
                "  volatile __u8 __target = mt_is_target_task(__pid_tgid);\n";
    for (size_t i : shared) {
      out_ << "  " + probes[i].program + "(__ctx, __target, __pid_tgid);\n";
      probes[i].attached_program = name;
    }
    out_ << "  return 0;\n}\n" + std::string(kProgramGuardClose);
  }

 private:
  // A file's probes (uprobes) are attached by libbpf's options, not by
  // what their section names.
  static std::string section(const ResolvedProbe &rp) {
    const ProbeKindInfo &kind = probe_kind(rp.name.kind);
    switch (kind.target) {
      case TargetForm::CategoryEvent: return kind.section + rp.name.category + "/" + rp.name.target;
      case TargetForm::Name: return kind.section + rp.name.target;
      default: return kind.section;
    }
  }

  // The tracepoint field a capture names directly (`args.NAME`), if any.
  const TraceField *trace_field(const ResolvedProbe &rp, const Capture &c) {
    if (!rp.format || c.expr.text.rfind("args.", 0) != 0)
      return nullptr;
    return rp.format->find(c.expr.text.substr(5));
  }

  // struct NAME { HEADER; one member per capture }, typed by typeof().
  void write_struct(const std::string &name, const ResolvedProbe &rp,
                    const std::vector<Capture> &members, const std::string &header) {
    out_ << "struct " + name + " {\n" + header;
    for (const auto &c : members) {
      const TraceField *field = trace_field(rp, c);
      if (c.stack != StackKind::None) {
        out_ << "  " + stack_map_name(c) + "_t " + c.name + ";\n";
      } else if (c.is_string || (field && field->data_loc)) {
        out_ << "  char " + c.name + "[" + std::to_string(c.string_size) + "];\n";
      } else if (!c.c_type.empty() || !leading_cast_type(c.expr.text).empty()) {
        std::string type = c.c_type.empty() ? leading_cast_type(c.expr.text) : c.c_type;
        out_ << "  " + type + " " + c.name + ";\n";
      } else if (c.name.rfind("__", 0) == 0) {
        // Drawing's own values (flow ids, track keys, durations) are
        // numbers, and may name the action's locals, which typeof() at file
        // scope could not see.
        out_ << "  __u64 " + c.name + ";\n";
      } else {
        out_ << "  __typeof__(\n";
        for (const auto &[name, stand_in] : stand_ins_)
          out_ << "#define " + name + " " + stand_in + "\n";
        // Map reads are statement expressions, which file scope refuses:
        // inside typeof() only their type matters.
        for (const auto &[name, stand_in] : kMapReadTypes)
          out_ << "#pragma push_macro(\"" + std::string(name) + "\")\n#undef " + name +
                      "\n#define " + name + stand_in + "\n";
        out_.expression(c.expr);
        for (const auto &[name, stand_in] : kMapReadTypes)
          out_ << "#pragma pop_macro(\"" + std::string(name) + "\")\n";
        for (const auto &[name, stand_in] : stand_ins_)
          out_ << "#undef " + name + "\n";
        out_ << ") " + c.name + ";\n";
      }
    }
    out_ << "};\n";
  }

  // A hash key: zeroed (padding included) and then filled.
  void write_key(const std::string &var, const std::string &type, const ResolvedProbe &rp,
                 const std::vector<Capture> &fields, bool reads_user) {
    out_ << "  struct " + type + " " + var + ";\n  __builtin_memset(&" + var + ", 0, sizeof(" +
                var + "));\n";
    for (const auto &c : fields)
      write_capture(rp, c, reads_user, var + ".");
  }

  bool in_thread_storage(const LatencyDecl &lat) const {
    return thread_storage_ && keyed_by_thread(lat);
  }

  // The key argument of mt_latency_start/stop: a pointer to VAR, written
  // here, or 0 for the current thread's storage.
  std::string latency_key(const std::string &var, const LatencyDecl &lat,
                          const std::vector<Capture> &fields, const ResolvedProbe &rp,
                          bool reads_user) {
    if (in_thread_storage(lat))
      return "0";
    write_key(var, latency_map_name(lat.id) + "_key", rp, fields, reads_user);
    return "&" + var;
  }

  void write_latency_map(const LatencyDecl &lat, const ResolvedProbe &rp) {
    std::string name = latency_map_name(lat.id);
    out_ << comment("latency pair '" + lat.name + "': start times by key");
    // The start time first (mt_latency_start sets it), then what is carried.
    std::string value = name + MT_MAP_VALUE_TYPE_SUFFIX;
    write_struct(value, rp, lat.carry, "  __u64 __start_ns;\n");
    out_ << "extern struct " + value + " __mt_start_" + std::to_string(lat.id) + ";\n";
    if (in_thread_storage(lat)) {
      out_ << map_definition(name, "BPF_MAP_TYPE_TASK_STORAGE", 0, "int", "struct " + value,
                             "BPF_F_NO_PREALLOC");
      return;
    }
    write_struct(name + "_key", rp, lat.key, lat.key.empty() ? "  __u32 __none;\n" : "");
    out_ << map_definition(name, "BPF_MAP_TYPE_LRU_HASH", lat.size, "struct " + name + "_key",
                           "struct " + value);
  }

  void write_aggregation_map(const AggregationDecl &agg, const ResolvedProbe &rp) {
    std::string name = aggregation_map_name(agg.id);
    out_ << comment(std::string(agg_kind_name(agg.kind)) + " '" + agg.name + "'");
    std::string header = is_histogram(agg.kind) ? "  __u32 __slot;\n"
                         : agg.keys.empty()     ? "  __u32 __none;\n"
                                                : "";
    write_struct(name + "_key", rp, agg.keys, header);
    bool counter = agg.kind == AggKind::Count || is_histogram(agg.kind);
    out_ << map_definition(name, "BPF_MAP_TYPE_PERCPU_HASH", agg.size, "struct " + name + "_key",
                           counter ? "__u64" : "struct mt_stats");
  }

  void write_aggregation_update(const AggregationDecl &agg, const ProbeDecl &probe,
                                const ResolvedProbe &rp, bool reads_user) {
    std::string id = std::to_string(agg.id);
    std::string map = "&" + aggregation_map_name(agg.id);
    out_ << "  {\n";
    write_key("__k", aggregation_map_name(agg.id) + "_key", rp, agg.keys, reads_user);
    if (agg.kind != AggKind::Count) {
      Expression value = agg.value;
      if (value.text.empty()) {
        if (probe.latency_stop < 0)
          throw Error(std::string(agg_kind_name(agg.kind)) + " '" + agg.name +
                          "' needs value = \"C expression\" (or feed it from a latency pair)",
                      agg.where);
        value = {"latency", agg.where};
      }
      out_ << "  __s64 __v = (__s64)(";
      out_.expression(value);
      out_ << ");\n";
      if (uint64_t div = unit_divisor(agg.unit); div > 1)
        out_ << "  __v = mt_scale(__v, " + std::to_string(div) + "ULL);\n";
    }
    switch (agg.kind) {
      case AggKind::Count: out_ << "  mt_agg_add(" + map + ", &__k, 1, " + id + ");\n"; break;
      case AggKind::Log2Hist:
        out_ << "  __k.__slot = mt_log2_slot(__v);\n  mt_agg_add(" + map + ", &__k, 1, " + id +
                    ");\n";
        break;
      case AggKind::LinearHist:
        out_ << "  __k.__slot = mt_linear_slot(__v, " + std::to_string(agg.lmin) + "LL, " +
                    std::to_string(agg.lmax) + "LL, " + std::to_string(agg.lstep) +
                    "ULL);\n  mt_agg_add(" + map + ", &__k, 1, " + id + ");\n";
        break;
      default: out_ << "  mt_agg_stats(" + map + ", &__k, __v, " + id + ");\n"; break;
    }
    out_ << "  }\n";
  }

  // Whether `text` is just `start.NAME`, a value the pair's start carried.
  bool carried(const ResolvedProbe &rp, const std::string &text) const {
    int stop = in_.decl->probes[rp.decl_id].latency_stop;
    if (stop < 0 || text.rfind("start.", 0) != 0)
      return false;
    for (const auto &c : in_.decl->latencies[stop].carry)
      if (text == "start." + c.name)
        return true;
    return false;
  }

  void write_capture(const ResolvedProbe &rp, const Capture &c, bool reads_user,
                     const std::string &prefix) {
    const TraceField *field = trace_field(rp, c);
    std::string dst = prefix + c.name;
    if (c.stack == StackKind::Kernel) {
      out_ << "  " + dst + " = bpf_get_stackid(__ctx, &" + stack_map_name(c) + ", 0);\n";
    } else if (c.stack == StackKind::User) {
      out_ << "  " + dst + " = (bpf_get_current_pid_tgid() & 0xffffffff00000000ULL) | (__u32)" +
                  "bpf_get_stackid(__ctx, &" + stack_map_name(c) + ", BPF_F_USER_STACK);\n";
      out_ << "  mt_announce_process();\n";
    } else if (field && field->data_loc) {
      out_ << "  bpf_probe_read_kernel_str(" + dst + ", sizeof(" + dst + "), mt_data_loc(__ctx, " +
                  c.expr.text + "));\n";
    } else if (c.is_string) {
      bool user = c.string_memory == StringMemory::User ||
                  (c.string_memory == StringMemory::Guess &&
                   (reads_user ||
                    (rp.name.kind == ProbeKind::Tracepoint && rp.name.category == "syscalls" &&
                     field && field->type.find('*') != std::string::npos)));
      out_ << "  {\n  const void *__str = (const void *)(";
      out_.expression(c.expr);
      out_ << ");\n";
      if (user) {
        out_ << "  bpf_probe_read_user_str(" + dst + ", sizeof(" + dst + "), __str);\n";
      } else {
        out_ << "  long __n = bpf_probe_read_kernel_str(" + dst + ", sizeof(" + dst +
                    "), __str);\n";
        // str() of a pointer the kernel got from a program (a kprobe's
        // `const char __user *`): the kernel's read refuses a user address,
        // so it is read from the program's memory instead of giving "".
        if (c.string_memory == StringMemory::Guess)
          out_ << "  if (__n < 0)\n    bpf_probe_read_user_str(" + dst + ", sizeof(" + dst +
                      "), __str);\n";
        out_ << "  (void)__n;\n";
      }
      out_ << "  }\n";
    } else if (field && field->array_len > 0 && prefix != "__r->" &&
               field->type.find("char") != std::string::npos) {
      // A name in a key (args.comm, args.rwbs): up to its NUL only, into the
      // zeroed key. Tracepoints copy a whole array, and what follows the NUL
      // is left from an earlier, longer name: equal names must be equal keys.
      out_ << "  bpf_probe_read_kernel_str(" + dst + ", sizeof(" + dst + "), " + c.expr.text +
                  ");\n";
    } else if ((field && field->array_len > 0) || c.expr.text == "comm") {
      out_ << "  __builtin_memcpy(" + dst + ", " + c.expr.text + ", sizeof(" + dst + "));\n";
    } else if (carried(rp, c.expr.text)) {
      // Copied whatever its type: a carried comm or string is an array.
      out_ << "  __builtin_memcpy(&" + dst + ", &" + c.expr.text + ", sizeof(" + dst + "));\n";
    } else {
      out_ << "  " + dst + " = (";
      out_.expression(c.expr);
      out_ << ");\n";
    }
  }

  const GeneratorInput &in_;
  CTypeEmitter *types_;
  Emitter &out_;
  std::set<int> defined_aggregations_, defined_latencies_;
  bool thread_storage_ = false;  // thread-keyed pairs keep their starts in task storage
  // (name, file-scope stand-in) of what expressions name, for typeof().
  std::vector<std::pair<std::string, std::string>> stand_ins_;
};

void write_params(const Declaration &decl, Emitter &out) {
  out << "struct mt_params {\n";
  for (const auto &p : decl.params) {
    switch (p.type) {
      case ParamType::Int: out << "  __s64 " + p.name + ";\n"; break;
      case ParamType::Uint: out << "  __u64 " + p.name + ";\n"; break;
      case ParamType::Bool: out << "  bool " + p.name + ";\n"; break;
      case ParamType::String:
        out << "  char " + p.name + "[" + std::to_string(MT_PARAM_STRING_BYTES) + "];\n";
        break;
    }
  }
  out << "};\n/* Set before load from the command line; the verifier sees constants. */\n";
  out << "MT_SHARED const volatile struct mt_params param = {};\n";
}

// A map per stack kind and depth captured, and its values' type; with user
// stacks, mt_announce_process() sends a process's first one's pid in the
// record of `slot`. True when there are user stacks.
bool write_stack_maps(const Declaration &decl, size_t slot, Emitter &out) {
  std::set<std::string> written;
  bool user_stacks = false;
  auto write = [&](const std::vector<Capture> &captures) {
    for (const auto &c : captures) {
      if (c.stack == StackKind::None || !written.insert(stack_map_name(c)).second)
        continue;
      bool user = c.stack == StackKind::User;
      user_stacks |= user;
      int frame = user ? MT_STACK_BUILD_ID_FRAME_BYTES : 8;
      int depth = user ? c.stack_depth
                       : std::min(MT_STACK_MAX_DEPTH, c.stack_depth + MT_STACK_KERNEL_EXTRA_FRAMES);
      out << std::string("typedef ") + (user ? "__u64 " : "__s64 ") + stack_map_name(c) + "_t;\n";
      // Hash slots, a power of two (the kernel rounds up to one).
      uint32_t entries = MT_STACK_MAP_MIN_ENTRIES;
      while (entries < MT_STACK_MAP_MAX_ENTRIES &&
             uint64_t{entries} * 2 * static_cast<uint32_t>(depth * frame) <= MT_STACK_MAP_BYTES)
        entries *= 2;
      out << "struct {\n  __uint(type, BPF_MAP_TYPE_STACK_TRACE);\n  __uint(max_entries, " +
                 std::to_string(entries) + ");\n  __uint(key_size, 4);\n  __uint(value_size, " +
                 std::to_string(depth * frame) + ");\n" +
                 (user ? "  __uint(map_flags, BPF_F_STACK_BUILD_ID);\n" : "") + "} " +
                 stack_map_name(c) + " SEC(\".maps\") MT_SHARED;\n";
    }
  };
  for (const auto &p : decl.probes)
    write(p.captures);
  for (const auto &a : decl.aggregations)
    write(a.keys);
  for (const auto &l : decl.latencies) {
    write(l.key);
    write(l.stop_key);
    write(l.carry);
  }
  if (!user_stacks)
    return false;
  std::string n = std::to_string(slot);
  out << "/* Processes whose user stacks were sent (LRU: one that is gone makes room). */\n";
  out << map_definition("mt_stack_processes", "BPF_MAP_TYPE_LRU_HASH", MT_STACK_MAP_MIN_ENTRIES,
                        "__u32", "__u8");
  // 1: announced; 2: its record was lost (counted once), the next stack of
  // the process tries again.
  out << "static __always_inline void mt_announce_process(void) {\n";
  out << "  __u64 task = bpf_get_current_pid_tgid();\n  __u32 pid = task >> 32;\n";
  out << "  __u8 announced = 1, again = 2;\n  __u32 count_loss_as = " + n + ";\n";
  out << "  __u8 *state = bpf_map_lookup_elem(&mt_stack_processes, &pid);\n";
  out << "  if (state && *state != again)\n    return;\n";
  out << "  if (state)\n    count_loss_as = MT_UNCOUNTED;\n";
  out << "  else if (bpf_map_update_elem(&mt_stack_processes, &pid, &announced, BPF_NOEXIST))\n"
         "    return;\n";
  out << "  struct mt_stage *stage;\n"
         "  struct mt_thread_name *r = mt_reserve(count_loss_as, sizeof(*r), &stage);\n";
  out << "  if (!r) {\n    bpf_map_update_elem(&mt_stack_processes, &pid, &again, BPF_ANY);\n"
         "    return;\n  }\n";
  out << "  if (state)\n    *state = announced;\n";
  out << "  r->__probe = " + n + ";\n  r->pid = pid;\n  r->tid = (__u32)task;\n";
  out << "  bpf_get_current_comm(r->comm, sizeof(r->comm));\n  mt_submit(stage, sizeof(*r));\n}\n";
  return true;
}

// The BPF map type of each kind of map a script declares.
const char *map_type_name(MapKind kind) {
  switch (kind) {
    case MapKind::Hash: return "BPF_MAP_TYPE_HASH";
    case MapKind::PercpuHash: return "BPF_MAP_TYPE_PERCPU_HASH";
    case MapKind::LruHash: return "BPF_MAP_TYPE_LRU_HASH";
    case MapKind::Array: return "BPF_MAP_TYPE_ARRAY";
    case MapKind::PercpuArray: return "BPF_MAP_TYPE_PERCPU_ARRAY";
  }
  return "";
}

void write_script_map(const MapDecl &m, Emitter &out) {
  auto typed = [](Expression type) {
    type.text = c_type(type.text);
    return type;
  };
  // Keys are packed: no padding bytes that map_key() would leave unset.
  auto write_struct = [&](const char *suffix, const auto &fields, const char *attributes) {
    out << "struct mt_map_" + m.name + suffix + " {\n";
    for (const auto &[name, type] : fields)
      out << "  " + c_type(type) + " " + name + ";\n";
    out << std::string("}") + attributes + ";\n";
  };
  if (!m.key_fields.empty())
    write_struct("_key", m.key_fields, " __attribute__((packed))");
  if (!m.value_fields.empty())
    write_struct(MT_MAP_VALUE_TYPE_SUFFIX, m.value_fields, "");
  out << comment("map '" + m.name + "' (" + m.where.file + ":" + std::to_string(m.where.line) +
                 ")");
  // Per-CPU values stay preallocated: allocated on insert, from what the
  // kernel keeps ready (GFP_NOWAIT), a burst of new keys finds none.
  bool hash = m.kind == MapKind::Hash;
  out << "struct {\n  __uint(type, " + std::string(map_type_name(m.kind)) +
             ");\n  __uint(max_entries, " + std::to_string(m.size) + ");\n" +
             (hash ? "  __uint(map_flags, MT_HASH_FLAGS);\n" : "") + "  __type(key, ";
  if (m.key_fields.empty())
    out.expression(typed(m.key_type));
  else
    out << "struct mt_map_" + m.name + "_key";
  out << ");\n  __type(value, ";
  if (m.value_fields.empty())
    out.expression(typed(m.value_type));
  else
    out << "struct mt_map_" + m.name + MT_MAP_VALUE_TYPE_SUFFIX;
  out << ");\n} " + m.name + " SEC(\".maps\") MT_SHARED;\n";
}

// A trace names each thread; a name read from /proc when its first event
// arrives may already be gone, or not yet set: io-workers name themselves
// (task_rename) and -c commands exec after attaching.
std::vector<std::string> write_thread_namers(const std::optional<TraceFormat> &rename, size_t id,
                                             Emitter &out) {
  std::string n = std::to_string(id);
  out << "\n/* Thread names for the trace, as they change. */\n";
  out << "struct mt_thread_name *__mt_type_names __attribute__((unused)) MT_SHARED;\n";
  out << "static __always_inline int mt_send_name(const void *comm) {\n";
  out << "  if (!mt_is_target())\n    return 0;\n";
  out << "  struct mt_stage *stage;\n  struct mt_thread_name *r = mt_reserve(" + n +
             ", sizeof(*r), &stage);\n";
  out << "  if (!r)\n    return 0;\n  __u64 task = bpf_get_current_pid_tgid();\n";
  out << "  r->__probe = " + n + ";\n  r->pid = task >> 32;\n  r->tid = (__u32)task;\n";
  out << "  if (comm)\n    bpf_probe_read_kernel(r->comm, sizeof(r->comm), comm);\n";
  out << "  else\n    bpf_get_current_comm(r->comm, sizeof(r->comm));\n";
  out << "  mt_submit(stage, sizeof(*r));\n  return 0;\n}\n";
  out << program_guard_open("mt_name_exec") + "SEC(\"tracepoint/sched/sched_process_exec\")\n";
  out << "int mt_name_exec(void *__ctx) {\n  return mt_send_name(NULL);\n}\n" +
             std::string(kProgramGuardClose);
  std::vector<std::string> programs = {"mt_name_exec"};
  const TraceField *pid = rename ? rename->find("pid") : nullptr;
  const TraceField *comm = rename ? rename->find("newcomm") : nullptr;
  if (pid && comm) {
    // The new name is in the event: the task's own changes after it.
    out << program_guard_open("mt_name_rename") + "SEC(\"tracepoint/task/task_rename\")\n";
    out << "int mt_name_rename(void *__ctx) {\n";
    out << "  if (*(__s32 *)((char *)__ctx + " + std::to_string(pid->offset) +
               ") != (__s32)bpf_get_current_pid_tgid())\n    return 0;\n";
    out << "  return mt_send_name((char *)__ctx + " + std::to_string(comm->offset) + ");\n}\n" +
               std::string(kProgramGuardClose);
    programs.push_back("mt_name_rename");
  }
  return programs;
}

// -p/-c: the children of targets are targets too, each known by when it
// started (the user space's own targets by 0), until its task is freed.
// Ids are freed at reap, the task an RCU grace period later: a new task
// given a gone target's id in between replaces its entry if it is a
// target's child, and takes it out if not, and the late free leaves
// alone an entry made for another task. Raw tracepoints, read with probe
// reads at the offsets of this kernel: libbpf need not load the kernel's
// BTF for them.
void write_followers(Emitter &out) {
  out << "\n/* -p/-c: children of targets are targets, until freed. */\n";
  out << "static __always_inline void mt_task_id(__u64 task, __u32 *id, __u64 *started) {\n";
  out << "  bpf_probe_read_kernel(id, 4, &((struct task_struct *)task)->pid);\n";
  out << "  bpf_probe_read_kernel(started, 8, &((struct task_struct *)task)->start_time);\n}\n";
  out << program_guard_open("mt_follow_fork") + "SEC(\"raw_tp/sched_process_fork\")\n";
  out << "int mt_follow_fork(__u64 *__ctx) {\n";
  out << "  if (!mt_filter_targets)\n    return 0;\n";
  out << "  __u32 id = 0;\n  __u64 started = 0;\n  mt_task_id(__ctx[1], &id, &started);\n";
  out << "  if (mt_is_target())\n";
  out << "    bpf_map_update_elem(&mt_targets, &id, &started, BPF_ANY);\n";
  out << "  else if (bpf_map_delete_elem(&mt_targets, &id) != 0)\n    return 0;\n";
  out << "  mt_targets_changed();\n";
  out << "  return 0;\n}\n" + std::string(kProgramGuardClose);
  out << program_guard_open("mt_follow_free") + "SEC(\"raw_tp/sched_process_free\")\n";
  out << "int mt_follow_free(__u64 *__ctx) {\n";
  out << "  if (!mt_filter_targets)\n    return 0;\n";
  out << "  __u32 id = 0;\n  __u64 started = 0;\n  mt_task_id(__ctx[0], &id, &started);\n";
  out << "  __u64 *known = bpf_map_lookup_elem(&mt_targets, &id);\n";
  out << "  if (known && *known == started && bpf_map_delete_elem(&mt_targets, &id) == 0)\n";
  out << "    mt_targets_changed();\n";
  out << "  return 0;\n}\n" + std::string(kProgramGuardClose);
}

}  // namespace

const std::vector<std::string> &builtin_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto &b : kBuiltins)
      n.push_back(b.name);
    return n;
  }();
  return names;
}

GeneratedProgram generate_c(const GeneratorInput &in) {
  GeneratedProgram program;
  std::vector<std::string> expressions;
  for (const auto &p : in.decl->probes)
    for (const Expression *e : expressions_of(*in.decl, p))
      expressions.push_back(e->text);
  std::unique_ptr<CTypeEmitter> types;
  if (in.btf) {
    std::set<std::string> members = member_names_in(expressions);
    if (in.follow_targets)  // read by the followers (write_followers)
      members.insert({"pid", "start_time"});
    types = std::make_unique<CTypeEmitter>(in.btf->raw(), std::move(members));
    if (in.follow_targets)
      types->declare_record("struct", "task_struct");
  }
  // Kernel records a script casts pointers to, e.g. (struct io_ring_ctx *)args.ctx;
  // ones the kernel lacks are left for Clang to report where they are used.
  if (types) {
    for (const auto &[kind, name] : record_names_in(expressions))
      types->declare_record(kind, name);
    for (const auto &text : expressions)
      if (free_identifiers(text).count("task")) {
        types->declare_record("struct", "task_struct");
        break;
      }
  }

  // An aggregation nothing feeds is a mistake, and would have no map.
  for (const auto &a : in.decl->aggregations) {
    bool fed = false;
    for (const auto &p : in.decl->probes)
      fed |= std::count(p.aggregations.begin(), p.aggregations.end(), a.id) > 0;
    if (!fed)
      throw Error(std::string(agg_kind_name(a.kind)) + " '" + a.name +
                      "' is fed by no probe: add aggregate = it to a probe, or into = it to a "
                      "latency pair",
                  a.where);
  }

  // Numbered apart from the head, so that a line of generated code names
  // one place (declaration_at_generated_line).
  Emitter body(kGeneratedBodyFirstLine, &program.built_expressions);
  ProbeWriter writer(in, types.get(), body);
  // Probes on the same tracepoint (classic, tp_btf or raw) share one program.
  const auto &resolved = in.resolution->probes;
  auto shares = [](ProbeKind kind) { return probe_kind(kind).shares_event; };
  std::map<std::string, std::vector<size_t>> by_event;
  for (size_t i = 0; i < resolved.size(); i++)
    if (shares(resolved[i].name.kind))
      by_event[resolved[i].name.to_string()].push_back(i);
  // One program runs them all: LLVM's 16-bit jumps give up near 32K
  // instructions (about 150 light probes, 1000 trip an LLVM abort), and the
  // verifier's budget is per program. Well below, and the same everywhere:
  for (const auto &[event, probes] : by_event)
    if (probes.size() > kMaxProbesPerTracepoint) {
      const ProbeDecl &over = in.decl->probes[resolved[probes[kMaxProbesPerTracepoint]].decl_id];
      throw Error(event + " has " + std::to_string(probes.size()) + " probes; at most " +
                      std::to_string(kMaxProbesPerTracepoint) +
                      " fit in the one program a tracepoint runs (merge them: one probe can "
                      "test many values with a map)",
                  over.where);
    }
  if (resolved.size() > kMaxPrograms)
    throw Error(std::to_string(resolved.size()) + " probes; at most " +
                    std::to_string(kMaxPrograms) + " programs are loaded for one script",
                in.decl->probes[resolved[kMaxPrograms].decl_id].where);
  for (size_t i = 0; i < resolved.size(); i++) {
    const auto &group = by_event[resolved[i].name.to_string()];
    bool shared = shares(resolved[i].name.kind) && group.size() > 1;
    program.probes.push_back(
        writer.write(i, resolved[i], shared ? shared_program_name(group[0]) : ""));
  }
  for (const auto &[event, probes] : by_event)
    if (probes.size() > 1)
      writer.write_shared(program.probes, probes, resolved[probes[0]]);
  if (in.follow_targets && types) {
    write_followers(body);
    program.follow_programs = {"mt_follow_fork", "mt_follow_free"};
  }
  bool draws = std::any_of(in.decl->probes.begin(), in.decl->probes.end(),
                           [](const ProbeDecl &p) { return !p.draws.empty(); });
  if (draws)
    program.naming_programs =
        write_thread_namers(in.rename_format, program.thread_name_slot(), body);

  Emitter stack_maps;  // written first: user stacks take a record slot
  program.announces_processes = write_stack_maps(*in.decl, program.thread_name_slot(), stack_maps);
  Emitter head(1, &program.built_expressions);
  head << comment("Generated by moontrace " MT_VERSION " from " + in.decl->script_path);
  head << "#define MT_NUM_PROBES " + std::to_string(std::max<size_t>(1, program.record_slots())) +
              "\n";
  const Declaration &decl = *in.decl;
  if (!decl.aggregations.empty())
    head << "#define MT_NUM_AGGREGATIONS " + std::to_string(decl.aggregations.size()) + "\n";
  if (!decl.latencies.empty())
    head << "#define MT_NUM_LATENCIES " + std::to_string(decl.latencies.size()) + "\n";
  // Reads of kernel numbers through struct pointers load directly (mt_helpers.h).
  if (in.btf && in.btf->with_function("bpf_rdonly_cast"))
    head << "#define MT_HAVE_RDONLY_CAST 1\n";
  // mt_for loops on the kernel's number iterator (mt_loops.h) where its
  // verifier checks them soundly: from 6.7, which also brought the task
  // iterator (6.4 to 6.6 accepted some unsafe iterator loops).
  program.uses_number_iterator = in.btf && in.btf->with_function("bpf_iter_num_new") &&
                                 in.btf->with_function("bpf_iter_task_new");
  if (program.uses_number_iterator)
    head << "#define MT_HAVE_ITER_NUM 1\n";
  if (private_stacks(in.btf, decl))
    head << "#define MT_GLOBAL_FLUSH 1\n";
  // Hash maps allocate entries on insert where tracing programs may use
  // such maps: from 6.1, whose hash maps allocate with bpf_mem_alloc.
  if (in.btf && in.btf->has_member("struct", "bpf_htab", "pcpu_ma"))
    head << "#define MT_HASH_FLAGS BPF_F_NO_PREALLOC\n";
  if (std::any_of(decl.probes.begin(), decl.probes.end(),
                  [](const ProbeDecl &p) { return draws_flow(p); }))
    head << "#define MT_FLOWS 1\n";
  head << "#include \"mt_runtime.h\"\n#include \"mt_pt_regs.h\"\n#include \"mt_aggregate.h\"\n"
          "#include \"mt_flow_marks.h\"\n";
  if (std::any_of(resolved.begin(), resolved.end(), [](const ResolvedProbe &p) {
        return probe_kind(p.name.kind).source == TargetSource::UsdtNotes;
      }))
    head << "#include \"mt_usdt.h\"\n";
  if (types) {
    std::string defs = types->definitions();
    if (!defs.empty())
      head << "\n/* Kernel types: the members this script names, at their offsets. */\n" + defs;
  }
  for (const auto &b : kBuiltins)
    head << std::string(b.file_scope) + "\n";
  if (!decl.latencies.empty())
    head << "extern __u64 latency; /* in a latency pair's stop probe */\n";
  for (const auto &m : decl.maps)
    write_script_map(m, head);
  head << stack_maps.str();
  if (!in.decl->params.empty()) {
    write_params(*in.decl, head);
    program.params_struct = "mt_params";
  }
  // The body's #line numbers count its own lines: anchor it at line 1.
  program.source =
      head.str() + line_directive(kGeneratedBodyFirstLine, kGeneratedFileName) + body.str();
  return program;
}

std::string aggregation_map_name(int id) {
  return "mt_agg_" + std::to_string(id);
}

std::string latency_map_name(int id) {
  return "mt_lat_" + std::to_string(id);
}

std::string stack_map_name(const Capture &stack) {
  return MT_STACK_MAP_PREFIX + std::string(stack.stack == StackKind::User ? "u" : "k") +
         std::to_string(stack.stack_depth);
}

}  // namespace mt
