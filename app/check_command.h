// moontrace check: which probe of each list a kernel would use, then the
// script compiled and, on this kernel, loaded into the verifier; nothing
// is attached and no trace is written. A team runs it in CI for each
// kernel it deploys to (--btf with that kernel's BTF).
#pragma once
#include <string>
#include <vector>

#include "app/cli.h"
#include "common/declaration.h"
#include "kernel/probe_resolver.h"
#include "script/lua_script.h"

namespace mt {

// One declared probe against a kernel: the alternative it would use (""
// when none), how many probes that is (a wildcard), and why each
// alternative before it, or every one, was passed over.
struct ProbeCheck {
  ScriptLocation where;
  std::string uses;
  size_t matches = 0;
  std::vector<std::string> skipped;  // "NAME: why"
};

std::vector<ProbeCheck> check_probes(const Declaration &decl, KernelFacts &kernel);

// The optional probes script{} names that KERNEL lacks: "NAME: why".
std::vector<std::string> missing_optional(const Declaration &decl, KernelFacts &kernel);

// Checks, prints the report on stdout (one JSON object with -f json) and
// returns the exit status: 1 when a probe is missing.
int run_check(const Options &options, const LuaScript &script, KernelFacts &kernel);

}  // namespace mt
