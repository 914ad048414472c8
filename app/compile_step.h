// Turns the generated C into a BPF object: from the cache when it holds
// it, else compiled by Clang on a thread a stop signal does not wait for;
// compile errors are told at the script's lines.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "app/cli.h"
#include "app/front_end_cache.h"
#include "codegen/c_generator.h"
#include "common/declaration.h"
#include "compiler/clang_compiler.h"
#include "kernel/probe_resolver.h"
#include "run/maps_ahead.h"
#include "script/lua_script.h"

namespace mt {

// The C for DECL's probes as RESOLUTION chose them, with KERNEL's types;
// without --unsafe, preprocessor directives in the script are refused.
GeneratedProgram generate_program(const Declaration &decl, const Resolution &resolution,
                                  KernelFacts &kernel, const Options &options);

// Declares SCRIPT (with MORE), its questions to the kernel answered as an
// earlier start on this kernel was answered, where one was: no BTF to read.
void declare_answered(LuaScript &script, const std::vector<LuaScript::More> &more,
                      const FrontEndCache &cache);

// What decides the object a run loads, short of declaring: its scripts,
// their arguments, whether it filters (-p/-c), and --unsafe.
std::string invocation_of(const ScriptSource &script, const std::vector<LuaScript::More> &more,
                          const Options &options);

// Starts making the maps of the object the last run of INVOCATION loaded
// (run/maps_ahead.h); none when none is known.
std::unique_ptr<MapsAhead> make_maps_ahead(const std::string &invocation,
                                           const FrontEndCache &cache, const Options &options);

// Whether DECL has a probe in the kernel (one that does not parse counts).
bool has_kernel_probes(const Declaration &decl);

// The C for DECL as an earlier start on this kernel generated it, else
// generated now and kept for the next start (front_end_cache.h).
FrontEndCache::Generated generate_or_reuse(const Declaration &decl, KernelFacts &kernel,
                                           const Options &options, const FrontEndCache &cache);

// How GENERATED's programs are compiled: which read pointers directly.
CompileOptions compile_options_for(const GeneratedProgram &generated);

// The object for GENERATED, from the cache or compiled (and kept); its
// cache key in *KEY when asked.
std::vector<char> compile_with_cache(const GeneratedProgram &generated, const Declaration &decl,
                                     const Options &options, const ScriptSource &script,
                                     std::string *key = nullptr);

}  // namespace mt
