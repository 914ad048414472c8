// What the compiler library (libmoontrace-compiler.so, the only part of
// moontrace that links Clang and LLVM) exports for the engine, which loads
// it only when it must compile: a warm start, a package, --help and list
// never map LLVM's 200 MB of libraries.
#pragma once
#include "compiler/clang_compiler.h"

namespace mt {

// Changed whenever CompileOptions, CompileResult or the entry change: a
// library of another build is refused, not called with the wrong layout.
inline constexpr int kCompilerAbi = 5;

struct CompilerEntry {
  int abi;
  // Never throws: a failure of the back end is CompileResult::failure.
  CompileResult (*compile)(const std::string &source, const CompileOptions &options);
  // Never throws: per address in the own address space of the binary open
  // at `fd` (kept by `key` for later calls), the functions holding it, an
  // inlined call's first ("name+offset"); none when unknown.
  std::vector<std::vector<std::string>> (*symbolize)(int fd, const std::string &key,
                                                     const std::vector<uint64_t> &addresses);
  const char *version;         // MT_VERSION of its build
  const char *sources_digest;  // of its sources (CMakeLists.txt): the engine's must match
};

std::vector<std::vector<std::string>> symbolize_with_llvm(
    int fd, const std::string &key, const std::vector<uint64_t> &addresses) noexcept;

// The name of the exported CompilerEntry.
inline constexpr const char *kCompilerEntrySymbol = "mt_compiler_entry";

}  // namespace mt
