// Compiles the generated C, or finds it compiled, and tells errors at the script's lines.
#include "app/compile_step.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "app/compile_job.h"
#include "codegen/expression_policy.h"
#include "codegen/source_locator.h"
#include "common/error.h"
#include "common/field_codec.h"
#include "compiler/clang_compiler.h"
#include "compiler/object_cache.h"

namespace mt {

namespace {

// `text` and a caret under its column (1-based); a long line is shown
// around the column only.
std::string with_caret(std::string text, int column) {
  constexpr int kShown = 100;
  if ((int)text.size() > kShown) {
    int from = std::max(0, std::min(column - 1 - kShown / 2, (int)text.size() - kShown));
    text = (from > 0 ? "..." : "") + text.substr(from, kShown) +
           (from + kShown < (int)text.size() ? "..." : "");
    column -= from - (from > 0 ? 3 : 0);
  }
  std::string out = "  " + text + "\n  ";
  for (int i = 1; i < column && i <= (int)text.size(); i++)
    out += text[i - 1] == '\t' ? '\t' : ' ';
  return out + "^\n";
}

// "file:line:col: error: message", the script's line, and a caret. An
// expression the script built at run time is shown itself, as the column
// counts in it; an error in the C generated around the script's
// expressions names the declaration it was generated for.
std::string render_diagnostic(const CompileDiagnostic &d, const ScriptSource &script,
                              const GeneratedProgram &generated, const std::string &compiled) {
  std::string kind = d.is_error ? "error: " : "warning: ";
  auto built = generated.built_expressions.find({d.file, d.line});
  if (built != generated.built_expressions.end())
    return d.file + ":" + std::to_string(d.line) + ": " + kind + d.message +
           ", in the C expression built there:\n" + with_caret(built->second, d.column);
  if (d.file != script.path && d.line > 0)
    if (auto decl = declaration_at_generated_line(compiled, d.file, d.line))
      return decl->file + ":" + std::to_string(decl->line) + ": " + kind + d.message +
             " (in the C generated for this declaration: check its expressions' types; -v shows "
             "the C)\n";
  std::string out = d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                    kind + d.message + "\n";
  if (d.file == script.path)
    out += with_caret(source_line(script.text, d.line), d.column);
  return out;
}

}  // namespace

CompileOptions compile_options_for(const GeneratedProgram &generated) {
  CompileOptions compile_options;
  for (const auto &p : generated.probes)
    (p.name.has_direct_btf_access() ? compile_options.typed_read_functions
                                    : compile_options.rewrite_functions)
        .insert(p.program);
  return compile_options;
}

std::string invocation_of(const ScriptSource &script, const std::vector<LuaScript::More> &more,
                          const Options &options) {
  FieldWriter w;
  w.str(script.path).str(script.text).strs(options.script_args);
  w.num(options.pid || !options.command.empty()).num(options.unsafe);
  for (size_t i = 0; i < more.size(); i++)
    w.str(more[i].source.path).str(more[i].source.text).strs(options.more_scripts[i].args);
  return w.bytes();
}

std::unique_ptr<MapsAhead> make_maps_ahead(const std::string &invocation,
                                           const FrontEndCache &cache, const Options &options) {
  auto key = cache.object_expected(invocation);
  if (!key)
    return nullptr;
  bool filter = options.pid || !options.command.empty();
  return std::make_unique<MapsAhead>(
      *key,
      [key = *key, directory = ObjectCache::default_directory()]() {
        return ObjectCache(directory).load(key);
      },
      filter, filter || options.cgroup.id);
}

std::vector<char> compile_with_cache(const GeneratedProgram &generated, const Declaration &decl,
                                     const Options &options, const ScriptSource &script,
                                     std::string *key_out) {
  CompileOptions compile_options = compile_options_for(generated);
  ObjectCache cache(ObjectCache::default_directory());
  std::string key = ObjectCache::key_for(generated.source, compile_options);
  if (key_out)
    *key_out = key;
  if (!options.no_cache)
    if (auto object = cache.load(key)) {
      if (options.verbose)
        std::fprintf(stderr, "moontrace: using cached object %s\n", key.c_str());
      return *object;
    }
  compile_options.line_files = source_files(decl);
  std::string how;
  CompileResult result =
      compile_unless_stopped(generated.source, compile_options, !options.unsafe, &how);
  if (options.verbose && !how.empty())
    std::fprintf(stderr, "moontrace: %s\n", how.c_str());
  if (!result.ok) {
    // BPF gives a program 512 bytes of stack; big keys or strings pass it,
    // and LLVM says so in several lines, some inside our headers.
    for (const auto &d : result.diagnostics)
      if (d.message.find("BPF stack limit is exceeded") != std::string::npos ||
          d.message.find("built-in function 'memset' is not supported") != std::string::npos) {
        ScriptLocation where;
        for (const auto &e : result.diagnostics) {
          if (e.file == script.path)
            where = {e.file, e.line, 0};
          else if (auto decl =
                       declaration_at_generated_line(result.rewritten_source, e.file, e.line))
            where = *decl;
          if (!where.file.empty())
            break;
        }
        throw Error(
            "a probe's keys and values take more than the 512 bytes of stack BPF "
            "allows: use shorter strings (str(ptr, N)) or fewer or smaller keys",
            where, options.verbose ? "generated C:\n" + result.rewritten_source : "");
      }
    // An expression appears twice in generated C (record type and value):
    // report each place once.
    std::string text;
    std::set<std::string> seen;
    for (const auto &d : result.diagnostics) {
      std::string rendered = render_diagnostic(d, script, generated, result.rewritten_source);
      if (d.is_error && seen.size() < 3 && seen.insert(rendered).second)
        text += rendered;
    }
    if (text.empty())
      text = "the generated C did not compile\n";
    std::string detail = options.verbose ? "generated C:\n" + result.rewritten_source : "";
    // Errors in scaffolding no declaration accounts for are moontrace's own bugs.
    bool in_script = false;
    for (const auto &d : result.diagnostics)
      in_script |=
          d.is_error && (d.file == script.path ||
                         declaration_at_generated_line(result.rewritten_source, d.file, d.line));
    if (!in_script)
      text += "(this is a moontrace bug: the error is in generated code; run with -v to see it)\n";
    throw Error(text.substr(0, text.size() - 1), {}, detail);
  }
  cache.store(key, result.object);
  return result.object;
}
void declare_answered(LuaScript &script, const std::vector<LuaScript::More> &more,
                      const FrontEndCache &cache) {
  script.kernel_answers().replay(cache.answers());
  script.declare(more);
  if (script.kernel_answers().asked())
    cache.store_answers(script.kernel_answers().all());
}

bool has_kernel_probes(const Declaration &decl) {
  for (const auto &p : decl.probes) {
    try {
      if (p.alternatives.empty() || parse_probe_name(p.alternatives[0]).in_kernel())
        return true;
    } catch (const Error &) {
      return true;
    }
  }
  return false;
}

FrontEndCache::Generated generate_or_reuse(const Declaration &decl, KernelFacts &kernel,
                                           const Options &options, const FrontEndCache &cache) {
  bool filter = options.pid || !options.command.empty();
  if (auto generated = cache.generated(decl, filter)) {
    if (!options.unsafe)
      check_no_directives(decl);
    if (options.verbose)
      std::fprintf(stderr, "moontrace: using the C an earlier start generated for this script\n");
    return std::move(*generated);
  }
  Resolution resolution = resolve_probes(decl, kernel);
  FrontEndCache::Generated generated{generate_program(decl, resolution, kernel, options),
                                     std::move(resolution.user), std::move(resolution.notes)};
  cache.store_generated(decl, filter, generated);
  return generated;
}

GeneratedProgram generate_program(const Declaration &decl, const Resolution &resolution,
                                  KernelFacts &kernel, const Options &options) {
  GeneratorInput input;
  input.decl = &decl;
  input.resolution = &resolution;
  input.btf = resolution.types ? resolution.types : kernel.btf();
  input.follow_targets = options.pid || !options.command.empty();
  if (!decl.trace_file.empty())
    input.rename_format = kernel.tracepoint("task", "task_rename");
  if (!options.unsafe)
    check_no_directives(decl);
  return generate_c(input);
}

}  // namespace mt
