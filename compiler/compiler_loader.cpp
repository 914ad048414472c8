// Loads the compiler library (Clang and LLVM) on the first compile, after checking it can be
// trusted.
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <mutex>

#include "common/error.h"
#include "common/trusted_path.h"
#include "compiler/compiler_library.h"

namespace mt {

namespace {

constexpr const char *kLibraryName = "libmoontrace-compiler.so";

const CompilerEntry *loaded_entry = nullptr;

// Where the library is: next to the executable (an installed or copied
// moontrace), else where this build put it.
std::string library_path() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string dir(exe, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    std::string beside = dir + "/" + kLibraryName;
    if (access(beside.c_str(), F_OK) == 0)
      return beside;
  }
  return MT_COMPILER_LIBRARY;
}

const CompilerEntry &entry() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::string path = library_path();
    if (access(path.c_str(), F_OK) != 0)
      throw Error("cannot compile: the compiler library " + path +
                  " is missing (build it, or run a script whose object is cached)");
    // Opened once checked; loaded through that descriptor, so that what
    // was checked is what runs.
    UniqueFd fd = open_trusted_file(path, script_owners());
    std::string by_fd = "/proc/self/fd/" + std::to_string(fd.get());
    void *library = dlopen(by_fd.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library)
      throw Error("cannot load the compiler library " + path + ": " + dlerror() +
                  " (compiling needs Clang/LLVM 19; a script compiled before runs without)");
    auto *found = static_cast<const CompilerEntry *>(dlsym(library, kCompilerEntrySymbol));
    if (!found || found->abi != kCompilerAbi)
      throw Error("the compiler library " + path + " is of another moontrace build (" +
                  (found ? found->version : "no entry") + "); rebuild it with this one");
    loaded_entry = found;
  });
  if (!loaded_entry)
    throw Error("cannot compile: the compiler library did not load");
  return *loaded_entry;
}

}  // namespace

CompileResult compile_bpf(const std::string &source, const CompileOptions &options) {
  CompileResult result = entry().compile(source, options);
  if (!result.failure.empty())
    throw Error(result.failure);
  return result;
}

bool compiler_loaded() {
  return loaded_entry != nullptr;
}

}  // namespace mt
