// Plain inputs for testing stages alone: a tracepoint format like the
// kernel's, and a declaration built without Lua.
#pragma once
#include "codegen/c_generator.h"
#include "common/declaration.h"
#include "kernel/probe_resolver.h"
#include "kernel/tracefs_format.h"
#include "output/output.h"
#include "script/lua_script.h"
#include "script/script_params.h"

namespace mt::testing {

// The common fields every tracepoint format starts with.
#define MT_COMMON_FIELDS                                                         \
  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

inline const char *kCompleteFormat =
    "name: io_uring_complete\nID: 2141\nformat:\n" MT_COMMON_FIELDS
    R"(	field:void * ctx;	offset:8;	size:8;	signed:0;
	field:void * req;	offset:16;	size:8;	signed:0;
	field:u64 user_data;	offset:24;	size:8;	signed:0;
	field:int res;	offset:32;	size:4;	signed:1;
	field:unsigned cflags;	offset:36;	size:4;	signed:0;
	field:u64 extra1;	offset:40;	size:8;	signed:0;
	field:u64 extra2;	offset:48;	size:8;	signed:0;
	field:__data_loc char[] op_str;	offset:56;	size:4;	signed:0;

print fmt: "ring %p", REC->ctx
)";

// Answers from fixed data instead of the running kernel.
class FakeKernel : public KernelFacts {
 public:
  std::optional<TraceFormat> tracepoint(const std::string &category,
                                        const std::string &event) override {
    if (category != "io_uring" || event != "io_uring_complete")
      return std::nullopt;
    std::optional<TraceFormat> f = parse_trace_format(kCompleteFormat);
    f->category = category;
    return f;
  }
  std::vector<std::string> tracepoint_names() override {
    return {"io_uring:io_uring_complete", "io_uring:io_uring_create", "sched:sched_switch"};
  }
  bool tracefs_readable() override { return true; }
  const KernelBtf *btf() override { return nullptr; }
  bool has_kprobes() override { return false; }
  std::string fentry_unavailable_reason() override { return "refused"; }
  std::string release() override { return "5.10.0-test"; }
};

inline Declaration complete_declaration(const std::string &filter, const std::string &capture) {
  Declaration d;
  d.script_path = "test.lua";
  ProbeDecl p;
  p.alternatives = {"tracepoint:io_uring:io_uring_complete"};
  p.where = {"test.lua", 3, 0};
  p.predicate = {filter, {"test.lua", 4, 13}};
  p.captures.push_back({"ud", {capture, {"test.lua", 5, 20}}});
  p.has_handler = true;
  d.probes.push_back(p);
  Param min;
  min.name = "min";
  min.type = ParamType::Int;
  min.value.number = 7;
  d.params.push_back(min);
  return d;
}

// The program generated for `d` on `kernel`, with the kernel's BTF if it has any.
inline GeneratedProgram generate_on(const Declaration &d, KernelFacts &kernel) {
  Resolution r = resolve_probes(d, kernel);
  GeneratorInput in;
  in.decl = &d;
  in.resolution = &r;
  in.btf = kernel.btf();
  return generate_c(in);
}

// The program generated for complete_declaration(filter, capture).
inline GeneratedProgram generate_complete(const std::string &filter, const std::string &capture) {
  FakeKernel kernel;
  return generate_on(complete_declaration(filter, capture), kernel);
}

// A script loaded from `text` with its arguments and output.
struct LoadedScript {
  ScriptArgs args;
  Output output;
  LuaScript script;
  LoadedScript(const std::string &text, std::vector<std::string> argv = {}, bool unsafe = false)
      : args(std::move(argv)), script({"t.lua", text}, SandboxOptions{unsafe, {}}, args, output) {}
};

}  // namespace mt::testing
