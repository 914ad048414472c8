#include "compiler/c_generator.h"

#include <bpf/btf.h>

#include <cctype>
#include <memory>
#include <set>
#include <sstream>

#include "compiler/error.h"

namespace mt {

namespace {

struct Builtin {
  const char *name;
  const char *file_scope;  // declaration used only inside typeof()
  const char *local;       // definition at the top of a probe function
};

const Builtin kBuiltins[] = {
    {"pid", "extern __u32 pid;", "__u32 pid = bpf_get_current_pid_tgid() >> 32;"},
    {"tid", "extern __u32 tid;", "__u32 tid = (__u32)bpf_get_current_pid_tgid();"},
    {"uid", "extern __u32 uid;", "__u32 uid = (__u32)bpf_get_current_uid_gid();"},
    {"gid", "extern __u32 gid;", "__u32 gid = bpf_get_current_uid_gid() >> 32;"},
    {"nsecs", "extern __u64 nsecs;", "__u64 nsecs = bpf_ktime_get_ns();"},
    {"cpu", "extern __u32 cpu;", "__u32 cpu = bpf_get_smp_processor_id();"},
    {"cgroup", "extern __u64 cgroup;", "__u64 cgroup = bpf_get_current_cgroup_id();"},
    {"comm", "extern char comm[16];", "char comm[16]; bpf_get_current_comm(comm, sizeof(comm));"},
};

// Identifiers in `text` that are not member names (not after . or ->).
std::set<std::string> free_identifiers(const std::string &text) {
  std::set<std::string> ids;
  for (size_t i = 0; i < text.size();) {
    if (std::isalpha((unsigned char)text[i]) || text[i] == '_') {
      size_t end = i;
      while (end < text.size() && (std::isalnum((unsigned char)text[end]) || text[end] == '_'))
        end++;
      size_t before = i;
      while (before > 0 && std::isspace((unsigned char)text[before - 1]))
        before--;
      bool member =
          before > 0 && (text[before - 1] == '.' ||
                         (before > 1 && text[before - 1] == '>' && text[before - 2] == '-'));
      if (!member)
        ids.insert(text.substr(i, end - i));
      i = end;
    } else if (text[i] == '"' || text[i] == '\'') {
      char quote = text[i++];
      while (i < text.size() && text[i] != quote)
        i += text[i] == '\\' ? 2 : 1;
      i++;
    } else {
      i++;
    }
  }
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

// Collects C text and counts its physical lines, so that the #line
// directive after each script expression restores generated numbering.
class Emitter {
 public:
  Emitter &operator<<(const std::string &text) {
    for (char c : text)
      line_ += c == '\n';
    out_ += text;
    return *this;
  }
  // Places a script expression at its script line and column.
  void expression(const Expression &e) {
    *this << "\n";
    if (e.where.line > 0)
      *this << "#line " + std::to_string(e.where.line) + " \"" + e.where.file + "\"\n" +
                   std::string(e.where.column > 1 ? e.where.column - 1 : 0, ' ');
    *this << e.text + "\n";
    *this << "#line " + std::to_string(line_ + 1) + " \"" + kGeneratedFileName + "\"\n";
  }
  std::string str() const { return out_; }

 private:
  std::string out_;
  int line_ = 1;  // physical line being written
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

const char *section_prefix(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::Tracepoint: return "tracepoint/";
    case ProbeKind::TpBtf: return "tp_btf/";
    case ProbeKind::RawTracepoint: return "raw_tp/";
    case ProbeKind::Kprobe: return "kprobe/";
    case ProbeKind::Kretprobe: return "kretprobe/";
    case ProbeKind::Fentry: return "fentry/";
    case ProbeKind::Fexit: return "fexit/";
    case ProbeKind::Uprobe: return "uprobe";
    case ProbeKind::Uretprobe: return "uretprobe";
    default: return "";
  }
}

// x86-64 argument registers in struct pt_regs, in calling-convention order.
const char *const kArgRegs[] = {"di", "si", "dx", "cx", "r8", "r9"};

class ProbeWriter {
 public:
  ProbeWriter(const GeneratorInput &in, CTypeEmitter *types, Emitter &out)
      : in_(in), types_(types), out_(out) {}

  GeneratedProbe write(size_t index, const ResolvedProbe &rp) {
    const ProbeDecl &decl = in_.decl->probes[rp.decl_id];
    std::string n = std::to_string(index);
    GeneratedProbe gp;
    gp.decl_id = rp.decl_id;
    gp.program = "mt_probe_" + n;
    gp.name = rp.name;
    gp.probe_name = rp.name.to_string();
    ProbeKind kind = rp.name.kind;
    bool reads_user = kind == ProbeKind::Uprobe || kind == ProbeKind::Uretprobe;

    out_ << "\n/* " + gp.probe_name + " (" + decl.where.file + ":" +
                std::to_string(decl.where.line) + ") */\n";
    // Arguments: a struct named after the probe; `args` names it both in
    // the function and, for typeof() of captures, at file scope.
    std::string args_struct = "struct mt_args_" + n;
    std::string retval_type;
    std::vector<std::string> arg_inits;
    out_ << args_struct + " {\n";
    if (kind == ProbeKind::Tracepoint) {
      int offset = 0;  // the common_* fields become padding
      for (const auto &f : rp.format->fields) {
        if (f.offset > offset)
          out_ << "  __u8 __pad_" + std::to_string(offset) + "[" +
                      std::to_string(f.offset - offset) + "];\n";
        out_ << "  " + trace_field_decl(f, types_, in_.btf) + ";\n";
        offset = f.offset + f.size;
      }
    } else if (rp.has_signature) {
      bool ret_only = kind == ProbeKind::Kretprobe;
      for (size_t i = 0; i < rp.signature.params.size() && !ret_only; i++) {
        const BtfParam &p = rp.signature.params[i];
        out_ << "  " + types_->declare(p.type_id, p.name) + ";\n";
        std::string src = kind == ProbeKind::Kprobe
                              ? (i < 6 ? std::string("__ctx->") + kArgRegs[i] : std::string("0"))
                              : "__ctx[" + std::to_string(i) + "]";
        arg_inits.push_back("(typeof(args." + p.name + "))" + src);
      }
      if ((kind == ProbeKind::Kretprobe || kind == ProbeKind::Fexit) && rp.signature.return_type)
        retval_type = types_->declare(rp.signature.return_type, "");
    } else if (reads_user) {
      for (int i = 0; i < 6; i++) {
        out_ << "  __u64 arg" + std::to_string(i) + ";\n";
        arg_inits.push_back(std::string("__ctx->") + kArgRegs[i]);
      }
      if (kind == ProbeKind::Uretprobe)
        retval_type = "__u64";
    }
    if (arg_inits.empty() && kind != ProbeKind::Tracepoint)
      out_ << "  __u8 __none;\n";
    out_ << "};\n";

    std::string ctx_type =
        kind == ProbeKind::Tracepoint ? args_struct + " *"
        : (kind == ProbeKind::Kprobe || kind == ProbeKind::Kretprobe || reads_user)
            ? "struct mt_pt_regs *"
            : "__u64 *";
    std::string retval_src = kind == ProbeKind::Fexit
                                 ? "__ctx[" + std::to_string(rp.signature.params.size()) + "]"
                                 : "__ctx->ax";

    // Record sent to user space: a header then one member per capture.
    bool sends = !decl.captures.empty() || decl.has_handler;
    if (sends) {
      gp.record = "mt_rec_" + n;
      out_ << "extern " + args_struct + " __mt_targs_" + n + ";\n";
      out_ << "#define args __mt_targs_" + n + "\n";
      if (!retval_type.empty())
        out_ << "extern " + retval_type + " __mt_tretval_" + n + ";\n#define retval __mt_tretval_" +
                    n + "\n";
      out_ << "struct " + gp.record + " {\n  __u32 __probe;\n";
      for (const auto &c : decl.captures) {
        const TraceField *field = trace_field(rp, c);
        if (c.is_string || (field && field->data_loc)) {
          out_ << "  char " + c.name + "[" + std::to_string(c.string_size) + "];\n";
        } else {
          out_ << "  __typeof__(";
          out_.expression(c.expr);
          out_ << ") " + c.name + ";\n";
        }
      }
      out_ << "};\n#undef args\n";
      if (!retval_type.empty())
        out_ << "#undef retval\n";
      // Keeps the record's type in the object's BTF for the decoder.
      out_ << "struct " + gp.record + " *__mt_type_" + n + " __attribute__((unused));\n";
    }

    // The program.
    out_ << "SEC(\"" + std::string(section_prefix(kind)) +
                (kind == ProbeKind::Tracepoint ? rp.name.category + "/" : "") +
                (reads_user ? "" : rp.name.target) + "\")\n";
    out_ << "int " + gp.program + "(" + ctx_type + "__ctx) {\n";
    out_ << "  if (!mt_is_target())\n    return 0;\n";
    if (kind == ProbeKind::Tracepoint) {
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
      out_ << "#define MT_PROBE_READ bpf_probe_read_user\n";
    else
      out_ << "#define MT_PROBE_READ bpf_probe_read_kernel\n";

    std::set<std::string> used;
    auto note_ids = [&](const std::string &text) {
      for (const auto &id : free_identifiers(text))
        used.insert(id);
    };
    note_ids(decl.predicate.text);
    for (const auto &c : decl.captures)
      note_ids(c.expr.text);
    for (const auto &b : kBuiltins)
      if (used.count(b.name))
        out_ << "  " + std::string(b.local) + "\n";

    if (!decl.predicate.text.empty()) {
      out_ << "  if (!(";
      out_.expression(decl.predicate);
      out_ << "))\n    return 0;\n";
    }
    if (sends) {
      out_ << "  struct " + gp.record + " *__r = mt_reserve(" + n + ", sizeof(*__r));\n";
      out_ << "  if (!__r)\n    return 0;\n  __r->__probe = " + n + ";\n";
      for (const auto &c : decl.captures)
        write_capture(rp, c, reads_user);
      out_ << "  bpf_ringbuf_submit(__r, 0);\n";
    }
    out_ << "  return 0;\n}\n";
    if (kind == ProbeKind::Tracepoint)
      out_ << "#undef args\n";
    out_ << "#undef MT_PROBE_READ\n";
    return gp;
  }

 private:
  // The tracepoint field a capture names directly (`args.NAME`), if any.
  const TraceField *trace_field(const ResolvedProbe &rp, const Capture &c) {
    if (!rp.format || c.expr.text.rfind("args.", 0) != 0)
      return nullptr;
    return rp.format->find(c.expr.text.substr(5));
  }

  void write_capture(const ResolvedProbe &rp, const Capture &c, bool reads_user) {
    const TraceField *field = trace_field(rp, c);
    std::string dst = "__r->" + c.name;
    if (field && field->data_loc) {
      out_ << "  bpf_probe_read_kernel_str(" + dst + ", sizeof(" + dst + "), mt_data_loc(__ctx, " +
                  c.expr.text + "));\n";
    } else if (c.is_string) {
      out_ << std::string("  ") +
                  (reads_user ? "bpf_probe_read_user_str" : "bpf_probe_read_kernel_str") + "(" +
                  dst + ", sizeof(" + dst + "), (const void *)(";
      out_.expression(c.expr);
      out_ << "));\n";
    } else if ((field && field->array_len > 0) || c.expr.text == "comm") {
      out_ << "  __builtin_memcpy(" + dst + ", " + c.expr.text + ", sizeof(" + dst + "));\n";
    } else {
      out_ << "  " + dst + " = (";
      out_.expression(c.expr);
      out_ << ");\n";
    }
  }

  const GeneratorInput &in_;
  CTypeEmitter *types_;
  Emitter &out_;
};

void write_params(const Declaration &decl, Emitter &out) {
  out << "struct mt_params {\n";
  for (const auto &p : decl.params) {
    switch (p.type) {
      case ParamType::Int: out << "  __s64 " + p.name + ";\n"; break;
      case ParamType::Uint: out << "  __u64 " + p.name + ";\n"; break;
      case ParamType::Bool: out << "  bool " + p.name + ";\n"; break;
      case ParamType::String: out << "  char " + p.name + "[64];\n"; break;
    }
  }
  out << "};\n/* Set before load from the command line; the verifier sees constants. */\n";
  out << "const volatile struct mt_params param = {};\n";
}

void write_fork_follower(const TraceFormat &format, Emitter &out) {
  const TraceField *child = format.find("child_pid");
  if (!child)
    return;
  out << "\n/* -p/-c: children of traced processes are traced too. */\n";
  out << "SEC(\"tracepoint/sched/sched_process_fork\")\n";
  out << "int mt_follow_fork(void *__ctx) {\n";
  out << "  if (!mt_filter_targets || !mt_is_target())\n    return 0;\n";
  out << "  __u32 child = *(__s32 *)((char *)__ctx + " + std::to_string(child->offset) + ");\n";
  out << "  __u8 one = 1;\n  bpf_map_update_elem(&mt_targets, &child, &one, BPF_ANY);\n";
  out << "  return 0;\n}\n";
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
  for (const auto &p : in.decl->probes) {
    expressions.push_back(p.predicate.text);
    for (const auto &c : p.captures)
      expressions.push_back(c.expr.text);
  }
  std::unique_ptr<CTypeEmitter> types;
  if (in.btf)
    types = std::make_unique<CTypeEmitter>(in.btf->raw(), member_names_in(expressions));

  Emitter body;
  ProbeWriter writer(in, types.get(), body);
  for (size_t i = 0; i < in.resolution->probes.size(); i++)
    program.probes.push_back(writer.write(i, in.resolution->probes[i]));
  if (in.fork_format) {
    write_fork_follower(*in.fork_format, body);
    program.follow_program = "mt_follow_fork";
  }

  Emitter head;
  head << "/* Generated by moontrace " MT_VERSION " from " + in.decl->script_path + " */\n";
  head << "#define MT_NUM_PROBES " + std::to_string(std::max<size_t>(1, program.probes.size())) +
              "\n";
  head << "#include \"mt_runtime.h\"\n#include \"mt_pt_regs.h\"\n";
  if (types) {
    std::string defs = types->definitions();
    if (!defs.empty())
      head << "\n/* Kernel types: only the members this script names (CO-RE). */\n" + defs;
  }
  for (const auto &b : kBuiltins)
    head << std::string(b.file_scope) + "\n";
  if (!in.decl->params.empty()) {
    write_params(*in.decl, head);
    program.params_struct = "mt_params";
  }
  // The body's #line numbers count its own lines: anchor it at line 1.
  program.source = head.str() + "#line 1 \"" + kGeneratedFileName + "\"\n" + body.str();
  return program;
}

}  // namespace mt
