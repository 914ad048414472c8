// Generated BPF C -> ELF object with BTF, by Clang/LLVM in this process,
// from the compiler library loaded when first needed.
#pragma once
#include <set>
#include <string>
#include <vector>

namespace mt {

struct CompileDiagnostic {
  std::string file;  // after #line: the script, or "<moontrace>"
  int line = 0;
  int column = 0;
  bool is_error = false;
  std::string message;
};

struct CompileResult {
  bool ok = false;
  std::vector<char> object;
  std::vector<CompileDiagnostic> diagnostics;
  std::string rewritten_source;  // after pointer-read rewriting
  std::string failure;           // the back end gave up (no diagnostics then)
};

struct CompileOptions {
  // Functions whose kernel pointer dereferences must become probe reads
  // (kprobe, tracepoint, raw tracepoint, uprobe programs).
  std::set<std::string> rewrite_functions;
  // Functions that load BTF-typed pointers directly (tp_btf, fentry...):
  // only reads through pointers cast from untyped values become reads.
  std::set<std::string> typed_read_functions;
  // The only file names `#line` may give (with the generated code's own):
  // LLVM's BTF writer reads the named files for the line text it records.
  // Empty: any name.
  std::set<std::string> line_files;
  // Macros defined before the source (NAME or NAME=VALUE): a part of a
  // split compile (codegen/program_parts.h).
  std::vector<std::string> defines;
};

// Compiles with the compiler library, loaded on the first call from next
// to the executable or from the build tree, once checked like a script
// (owned by root or you, writable by no one else). Throws mt::Error when
// there is none, or when the back end gives up.
CompileResult compile_bpf(const std::string &source, const CompileOptions &options);

// Loads the compiler library now; throws mt::Error when there is none.
void load_compiler_library();

// Per address of the ELF file open at `fd` (in the file's own address
// space; `key`, its build id, keeps it for later calls), the functions
// holding it, innermost first ("name+offset"), by LLVM's symbolizer in the
// compiler library: loaded on the first call, which throws mt::Error when
// there is none. Runs in run/symbolizer_process.h's child, never as root.
std::vector<std::vector<std::string>> symbolize_code(int fd, const std::string &key,
                                                     const std::vector<uint64_t> &addresses);

// Whether this process has loaded the compiler library (and so LLVM).
bool compiler_loaded();

}  // namespace mt
