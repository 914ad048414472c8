// What a start works out before it compiles, kept for the next start on
// the same kernel and engine (in the object cache's directory, trusted as
// it is): the kernel's answers to what scripts asked while declaring
// (script/kernel_answers.h), and the C generated for a declaration, by its
// fingerprint. A warm start then runs the script against those answers and
// takes the C as it was generated: it neither reads the kernel's BTF nor
// generates C. Anything that could change them is in their keys: the
// engine's build, the kernel's build and its loaded modules, the whole
// declaration (scripts, modules, parameters) and -p/-c. A declaration with
// a probe on a file (uprobe) is not kept: which alternative it takes
// depends on files, not on the kernel. A cache not to be trusted is not
// used (compiling then says why).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "codegen/c_generator.h"
#include "common/declaration.h"
#include "compiler/object_cache.h"
#include "script/kernel_answers.h"

namespace mt {

// What identifies the engine and the kernel: the files that change with
// their builds, the modules loaded, and what this process may see.
struct IdentityFiles {
  std::string engine = "/proc/self/exe";
  std::string kernel_btf = "/sys/kernel/btf/vmlinux";
  std::string modules = "/proc/modules";
  std::string status = "/proc/self/status";        // its effective capabilities
  std::string kernel_notes = "/sys/kernel/notes";  // the kernel's build id
};

class FrontEndCache {
 public:
  // What FILES and this process say of the engine and the kernel; none
  // when something that may change cannot be read (the cache is then off).
  static std::optional<std::string> identity(const IdentityFiles &files);

  // Off (nothing loaded or stored) under --no-cache.
  FrontEndCache(std::string directory, bool enabled, const IdentityFiles &files = {});

  // Answers kept for this kernel; none when there are none or they are damaged.
  KernelAnswers::Answers answers() const;
  void store_answers(const KernelAnswers::Answers &answers) const;

  struct Generated {
    GeneratedProgram program;
    std::vector<ResolvedProbe> user;  // begin, end and interval probes
    std::vector<std::string> notes;   // which alternatives were used, for -v
  };
  // The C generated for DECL on this kernel, with -p/-c (FILTER) or not.
  std::optional<Generated> generated(const Declaration &decl, bool filter) const;
  void store_generated(const Declaration &decl, bool filter, const Generated &generated) const;

  // The compiled object's key (object_cache.h) that the last start of the
  // same INVOCATION (its scripts, arguments and -p/-c) loaded, so that the
  // next one can make its maps while the script is declared
  // (run/maps_ahead.h). Only a guess: the object it ends up with decides.
  std::optional<std::string> object_expected(const std::string &invocation) const;
  void store_object_expected(const std::string &invocation, const std::string &object_key) const;

  // Exposed for tests: the bytes kept, and back.
  static std::string encode(const Generated &generated);
  static Generated decode(const std::string &bytes);  // throws mt::Error when damaged

 private:
  std::string key(const std::string &what) const;
  std::optional<std::vector<char>> load(const std::string &what) const;
  static std::string generated_key(const Declaration &decl, bool filter);

  ObjectCache store_;
  bool enabled_ = false;
  std::string identity_;  // engine and kernel
};

}  // namespace mt
