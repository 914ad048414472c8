// Fuzz target: a script's text -> declaration -> resolved probes ->
// generated C, as `moontrace --emit-c` does, without loading anything into
// the kernel. Kernel facts (tracefs formats, BTF) are read once and kept,
// so each input costs only Lua and the generator. A bad script must end
// in one mt::Error line; anything else is a bug.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <lua.hpp>
#include <map>
#include <memory>
#include <string>

#include "codegen/c_generator.h"
#include "common/error.h"
#include "kernel/probe_resolver.h"
#include "output/output.h"
#include "script/lua_script.h"
#include "script/script_params.h"
#if __has_include("script/lua_interrupt.h")
#include "script/lua_interrupt.h"
#define MT_FUZZ_HAS_INTERRUPT 1
#endif

namespace {

// The running kernel's answers, asked once each.
class RememberedKernel : public mt::KernelFacts {
 public:
  std::optional<mt::TraceFormat> tracepoint(const std::string &category,
                                            const std::string &event) override {
    std::string key = category + ":" + event;
    auto it = formats_.find(key);
    if (it == formats_.end())
      it = formats_.emplace(key, KernelFacts::tracepoint(category, event)).first;
    return it->second;
  }
  std::vector<std::string> tracepoint_names() override {
    if (!names_)
      names_ = KernelFacts::tracepoint_names();
    return *names_;
  }
  bool tracefs_readable() override {
    if (!tracefs_readable_)
      tracefs_readable_ = KernelFacts::tracefs_readable();
    return *tracefs_readable_;
  }
  bool has_kprobes() override {
    if (!has_kprobes_)
      has_kprobes_ = KernelFacts::has_kprobes();
    return *has_kprobes_;
  }
  std::vector<std::string> kprobe_function_names() override {
    if (!functions_)
      functions_ = KernelFacts::kprobe_function_names();
    return *functions_;
  }
  // Not asked: it loads a program into the kernel.
  std::string fentry_unavailable_reason() override { return "not asked while fuzzing"; }

 private:
  std::map<std::string, std::optional<mt::TraceFormat>> formats_;
  std::optional<std::vector<std::string>> names_, functions_;
  std::optional<bool> tracefs_readable_, has_kprobes_;
};

// Bounds on what one input may make Lua do: far above what the shipped
// scripts need (about 100,000 instructions and 2 MB with the stdlib), so
// that a loop or a huge string is a refused input rather than a timeout or
// an out-of-memory report.
constexpr size_t kMemoryBudget = 256 << 20;

// Puts a cap on the memory of `L` while it lives; the state is closed
// with the allocator it was opened with.
class MemoryBudget {
 public:
  explicit MemoryBudget(lua_State *L) : L_(L) {
    inner_ = lua_getallocf(L, &inner_ud_);
    used_ = static_cast<size_t>(lua_gc(L, LUA_GCCOUNT)) * 1024;
    lua_setallocf(L, alloc, this);
  }
  ~MemoryBudget() { lua_setallocf(L_, inner_, inner_ud_); }
  MemoryBudget(const MemoryBudget &) = delete;
  MemoryBudget &operator=(const MemoryBudget &) = delete;

 private:
  static void *alloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
    auto *b = static_cast<MemoryBudget *>(ud);
    size_t old_bytes = ptr ? old_size : 0;
    if (new_size > old_bytes && b->used_ - old_bytes + new_size > kMemoryBudget)
      return nullptr;  // Lua raises "not enough memory"
    void *p = b->inner_(b->inner_ud_, ptr, old_size, new_size);
    if (p || new_size == 0)
      b->used_ = b->used_ - old_bytes + new_size;
    return p;
  }

  lua_State *L_;
  lua_Alloc inner_;
  void *inner_ud_;
  size_t used_;
};

#ifndef MT_FUZZ_HAS_INTERRUPT
constexpr int kInstructionBudget = 20'000'000;
void instruction_budget_hook(lua_State *L, lua_Debug *) {
  // Raise again at every instruction: a pcall that caught this error
  // cannot keep the loop around it going.
  lua_sethook(L, instruction_budget_hook, LUA_MASKCOUNT, 1);
  luaL_error(L, "instruction budget of the fuzz target exhausted");
}
#endif

void require_one_line(const mt::Error &e) {
  std::string line = e.located();
  if (line.find('\n') != std::string::npos) {
    std::fprintf(stderr, "error message of more than one line: %s\n", line.c_str());
    std::abort();
  }
}

RememberedKernel &kernel() {
  static RememberedKernel k;
  return k;
}

void declare_and_generate(const std::string &text) {
  mt::ScriptArgs args({});
  mt::Output output;
  mt::LuaScript script({"fuzz.lua", text}, mt::SandboxOptions{}, args, output);
  script.set_kernel_facts(&kernel());
  MemoryBudget budget(script.state());
#ifdef MT_FUZZ_HAS_INTERRUPT
  // declare() arms its own hook; a deadline interrupts it.
  mt::set_lua_limits(0, mt::StopClock::now() + std::chrono::seconds(2));
  try {
    script.declare();
  } catch (const mt::LuaInterrupted &) {
    return;
  }
#else
  lua_sethook(script.state(), instruction_budget_hook, LUA_MASKCOUNT, kInstructionBudget);
  script.declare();
  lua_sethook(script.state(), nullptr, 0, 0);
#endif

  const mt::Declaration &decl = script.declaration();
  mt::params_help("fuzz.lua", decl.params);
  args.check_all_used();
  mt::Resolution resolution = mt::resolve_probes(decl, kernel());
  mt::GeneratorInput input;
  input.decl = &decl;
  input.resolution = &resolution;
  input.btf = resolution.types ? resolution.types : kernel().btf();
  input.follow_targets = true;
  if (!decl.trace_file.empty())
    input.rename_format = kernel().tracepoint("task", "task_rename");
  mt::generate_c(input);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // What scripts print while declaring is of no interest.
  int null = open("/dev/null", O_WRONLY);
  dup2(null, STDOUT_FILENO);
  close(null);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    declare_and_generate(std::string(reinterpret_cast<const char *>(data), size));
  } catch (const mt::Error &e) {
    require_one_line(e);
  }
  return 0;
}
