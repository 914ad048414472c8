// Declaration + resolved probes -> BPF C source. Script expressions are
// placed verbatim under #line directives that point back at the script.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bpf_headers/mt_abi.h"
#include "common/declaration.h"
#include "kernel/probe_resolver.h"

namespace mt {

// The file name generated scaffolding is attributed to in diagnostics.
inline constexpr const char *kGeneratedFileName = "<moontrace>";
// Generated lines after the types and maps are numbered from here.
inline constexpr int kGeneratedBodyFirstLine = 100001;

// Probes on one tracepoint share one program; a script loads at most
// kMaxPrograms probes (each a program, or a function of a shared one).
inline constexpr size_t kMaxProbesPerTracepoint = 64;
inline constexpr size_t kMaxPrograms = 2048;

struct GeneratedProbe {
  int decl_id = 0;
  std::string program;  // the probe's function, e.g. mt_probe_3
  // The BPF program attached for it: `program` itself, or one program that
  // runs every probe on the same tracepoint in declaration order.
  std::string attached_program;
  std::string record;      // record struct name, "" when nothing is sent
  std::string probe_name;  // concrete probe, e.g. tracepoint:io_uring:io_uring_complete
  ProbeName name;
};

struct GeneratedProgram {
  std::string source;
  std::vector<GeneratedProbe> probes;  // index == probe id in records and loss counters
  std::string params_struct;           // "mt_params", "" without parameters
  // Programs that follow -p/-c's targets: into their children, and
  // out of the set once each is gone; none without -p/-c.
  std::vector<std::string> follow_programs;
  // Program the reader runs on each CPU to hand what it staged to its ring
  // (mt_runtime.h); never attached.
  std::string flush_program = MT_NAME(MT_FLUSH_STAGE);
  // Programs that report thread names as they change (exec, io-workers
  // naming themselves) for a trace; their records carry probe id
  // `probes.size()` and struct mt_thread_name.
  std::vector<std::string> naming_programs;
  // A user stack sends its process's first one as a thread's name, so that
  // the run reads the process's mappings while it still runs.
  bool announces_processes = false;
  // The C runs mt_for on the kernel's number iterator (MT_HAVE_ITER_NUM):
  // only then may a script's C call its kfuncs (compiler/tracing_policy.h).
  bool uses_number_iterator = false;
  // Expressions the script built at run time ("pid > " .. n), so not found
  // in its text, by (file, line) of the call: Clang's column for them
  // counts in the expression, not in the script's line.
  std::map<std::pair<std::string, int>, std::string> built_expressions;

  // Records carry a slot: their probe's id, or the one after the last
  // probe's for a thread's name (struct mt_thread_name).
  uint32_t thread_name_slot() const { return static_cast<uint32_t>(probes.size()); }
  size_t record_slots() const {
    return probes.size() + (naming_programs.empty() && !announces_processes ? 0 : 1);
  }
};

struct GeneratorInput {
  const Declaration *decl = nullptr;
  const Resolution *resolution = nullptr;
  const KernelBtf *btf = nullptr;            // null: struct pointers become void *
  bool follow_targets = false;               // -p/-c: children of targets are traced (needs BTF)
  std::optional<TraceFormat> rename_format;  // task:task_rename, to name drawn threads
};

GeneratedProgram generate_c(const GeneratorInput &input);

// The map of aggregation (latency pair) `id`, in the generated C and for
// reading it back.
std::string aggregation_map_name(int id);
std::string latency_map_name(int id);
// The map of a stack capture's kind and depth ("mt_stack_k127"); its
// values' type is this name followed by "_t" (bpf_headers/mt_abi.h).
std::string stack_map_name(const Capture &stack);

// The builtin names expressions may use, e.g. pid, comm, nsecs.
const std::vector<std::string> &builtin_names();

}  // namespace mt
