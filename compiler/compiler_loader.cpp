// Loads the compiler library (Clang and LLVM) on the first compile, after checking it can be
// trusted.
#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "common/error.h"
#include "common/trusted_path.h"
#include "compiler/compiler_library.h"
#include "compiler/object_cache.h"

namespace mt {

namespace {

constexpr const char *kLibraryName = "libmoontrace-compiler.so";

const CompilerEntry *loaded_entry = nullptr;

// Where the library is: next to the executable (an installed or copied
// moontrace), else where this build put it, when the executable is of that
// build (under its directory): an installed moontrace never loads a
// library from a build tree.
std::string library_path(const std::string &exe) {
  std::string dir = exe.substr(0, exe.rfind('/'));
  std::string beside = dir + "/" + kLibraryName;
  if (access(beside.c_str(), F_OK) == 0)
    return beside;
  std::string built = MT_COMPILER_LIBRARY;
  std::string build_dir = built.substr(0, built.rfind('/') + 1);
  return exe.rfind(build_dir, 0) == 0 ? built : beside;
}

// Who may own the library: root, and whoever owns the executable (who
// could change that as well) - not, as for scripts, the sudo user.
std::vector<uid_t> library_owners(const std::string &exe) {
  std::vector<uid_t> owners = {0};
  struct stat st;
  if (stat(exe.c_str(), &st) == 0 && st.st_uid != 0)
    owners.push_back(st.st_uid);
  return owners;
}

std::string executable() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    throw Error("cannot compile: cannot find this executable (/proc/self/exe)");
  return std::string(exe, static_cast<size_t>(n));
}

const CompilerEntry &entry() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::string exe = executable();
    std::string path = library_path(exe);
    if (access(path.c_str(), F_OK) != 0)
      throw Error("cannot compile: the compiler library " + path +
                  " is missing (build it, or run a script whose object is cached)");
    // Opened once checked; loaded through that descriptor, so that what
    // was checked is what runs.
    UniqueFd fd = open_trusted_file(path, library_owners(exe));
    std::string by_fd = "/proc/self/fd/" + std::to_string(fd.get());
    void *library = dlopen(by_fd.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library)
      throw Error("cannot load the compiler library " + path + ": " + dlerror() +
                  " (compiling needs Clang/LLVM 19; a script compiled before runs without)");
    auto *found = static_cast<const CompilerEntry *>(dlsym(library, kCompilerEntrySymbol));
    if (!found || found->abi != kCompilerAbi ||
        std::strcmp(found->sources_digest, ObjectCache::compiler_sources_digest()) != 0)
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

void load_compiler_library() {
  entry();
}

std::vector<std::vector<std::string>> symbolize_code(int fd, const std::string &key,
                                                     const std::vector<uint64_t> &addresses) {
  return entry().symbolize(fd, key, addresses);
}

bool compiler_loaded() {
  return loaded_entry != nullptr;
}

}  // namespace mt
