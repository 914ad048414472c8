// What a start works out before it compiles, kept for the next start on
// the same kernel and engine (in the object cache's directory, trusted as
// it is): the kernel's answers to what scripts asked while declaring
// (script/kernel_answers.h), and the C generated for a declaration, by its
// fingerprint. A warm start then runs the script against those answers and
// takes the C as it was generated: it neither reads the kernel's BTF nor
// generates C. Anything that could change them is in their keys: the
// engine's build, the kernel's build and its loaded modules, the whole
// declaration (scripts, modules, parameters) and -p/-c.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "codegen/c_generator.h"
#include "common/declaration.h"
#include "compiler/object_cache.h"
#include "script/kernel_answers.h"

namespace mt {

// What identifies the engine and the kernel: files whose identity (device,
// inode, size, time) changes with their builds, and the modules listed.
struct IdentityFiles {
  std::string engine = "/proc/self/exe";
  std::string kernel_btf = "/sys/kernel/btf/vmlinux";
  std::string modules = "/proc/modules";
};

class FrontEndCache {
 public:
  static std::string identity(const IdentityFiles &files);

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

  // Exposed for tests: the bytes kept, and back.
  static std::string encode(const Generated &generated);
  static Generated decode(const std::string &bytes);  // throws mt::Error when damaged

 private:
  std::string key(const std::string &what) const;

  ObjectCache store_;
  bool enabled_;
  std::string identity_;  // engine and kernel
};

}  // namespace mt
