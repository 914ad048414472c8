// Reports what a script would use on a kernel, compiles it, and loads it without attaching.
#include "app/check_command.h"

#include <cstdio>

#include "app/compile_step.h"
#include "common/error.h"
#include "common/json_writer.h"
#include "compiler/tracing_policy.h"
#include "output/output.h"
#include "run/bpf_loader.h"

namespace mt {

std::vector<ProbeCheck> check_probes(const Declaration &decl, KernelFacts &kernel) {
  std::vector<ProbeCheck> out;
  for (const auto &probe : decl.probes) {
    ProbeCheck c;
    c.where = probe.where;
    try {
      if (auto chosen = first_available(probe.alternatives, kernel, true, c.skipped)) {
        c.uses = probe.alternatives[chosen->index];
        c.matches = chosen->probes.size();
      }
    } catch (const Error &e) {
      c.skipped.push_back(e.what());
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> missing_optional(const Declaration &decl, KernelFacts &kernel) {
  std::vector<std::string> out;
  for (const auto &info : decl.scripts)
    for (const auto &name : info.optional) {
      std::vector<std::string> reasons;
      try {
        if (first_available({name}, kernel, true, reasons))
          continue;
      } catch (const Error &e) {
        reasons = {name + ": " + e.what()};
      }
      out.push_back(reasons.empty() ? name : reasons[0]);
    }
  return out;
}

namespace {

std::string place(const ScriptLocation &where) {
  return where.file + ":" + std::to_string(where.line);
}

struct Outcome {
  bool missing = false;
  size_t programs = 0;  // compiled
  bool loaded = false;
};

// The probes part of the report, printed before compiling: a compile or
// verifier error follows it.
std::string probes_text(const std::string &script, const std::string &kernel_name, bool this_kernel,
                        const std::vector<ProbeCheck> &probes,
                        const std::vector<std::string> &optional) {
  std::string out = "check " + script + " on " + kernel_name + "\n";
  if (!this_kernel)
    out +=
        "(from BTF alone: that kernel's release, and whether it refuses fentry as lockdown "
        "may, are not known)\n";
  for (const auto &p : probes) {
    out += place(p.where) + ": " + (p.uses.empty() ? "MISSING" : p.uses);
    if (p.matches > 1)
      out += " (" + std::to_string(p.matches) + " probes)";
    out += "\n";
    for (const auto &s : p.skipped)
      out += "  " + std::string(p.uses.empty() ? "" : "skipped ") + s + "\n";
  }
  for (const auto &m : optional)
    out += "optional, not there: " + m + "\n";
  return out;
}

std::string outcome_text(const Outcome &o, bool this_kernel) {
  if (o.missing)
    return "a probe is missing: not compiled\n";
  std::string out =
      "compiled: " + std::to_string(o.programs) + " program" + (o.programs == 1 ? "" : "s") + "\n";
  return out + (this_kernel ? "loaded: the verifier accepted every program (nothing attached)\n"
                            : "not loaded: that kernel is not the one running here\n");
}

std::string report_json(const std::string &script, const std::string &kernel_name,
                        const std::vector<ProbeCheck> &probes,
                        const std::vector<std::string> &optional, const Outcome &o) {
  JsonWriter json;
  json.object().key("script").str(script).key("kernel").str(kernel_name).key("probes").array();
  for (const auto &p : probes) {
    json.object().key("file").str(p.where.file).key("line").num(p.where.line);
    json.key("uses");
    p.uses.empty() ? json.null() : json.str(p.uses);
    json.key("matches").num(p.matches).key("skipped").array();
    for (const auto &s : p.skipped)
      json.str(s);
    json.end().end();
  }
  json.end().key("optional_missing").array();
  for (const auto &m : optional)
    json.str(m);
  json.end().key("ok").boolean(!o.missing).key("compiled_programs").num(o.programs);
  json.key("loaded").boolean(o.loaded);
  return json_message("check", json.end().text());
}

}  // namespace

int run_check(const Options &options, const LuaScript &script, KernelFacts &kernel) {
  const Declaration &decl = script.declaration();
  const std::string &name = script.source().path;
  bool this_kernel = options.check_btf.empty();
  std::string kernel_name =
      this_kernel ? "this kernel (" + kernel.release() + ")" : "the kernel of " + options.check_btf;
  // Without root this kernel's tracefs and BPF say no to everything: no
  // report of missing probes that are there.
  if (this_kernel)
    check_bpf_usable();
  std::vector<ProbeCheck> probes = check_probes(decl, kernel);
  std::vector<std::string> optional = missing_optional(decl, kernel);
  if (!options.json) {
    std::fputs(probes_text(name, kernel_name, this_kernel, probes, optional).c_str(), stdout);
    std::fflush(stdout);
  }
  Outcome outcome;
  for (const auto &p : probes)
    outcome.missing |= p.uses.empty();
  if (!outcome.missing) {
    Resolution resolution = resolve_probes(decl, kernel);
    GeneratedProgram generated = generate_program(decl, resolution, kernel, options);
    std::vector<char> object;
    if (!resolution.probes.empty()) {
      object = compile_with_cache(generated, decl, options, script.source());
      if (!options.unsafe)
        check_tracing_only({object.data(), object.size()}, generated, decl);
    }
    outcome.programs = generated.probes.size();
    if (this_kernel && !resolution.probes.empty()) {
      BpfProgram program(object, generated, decl);
      LoadSettings settings;
      settings.verbose = options.verbose > 0;
      settings.unsafe = options.unsafe;
      settings.params = program.pack_params(decl.params);
      program.load(settings);
      outcome.loaded = true;
    }
  }
  std::fputs(options.json
                 ? (report_json(name, kernel_name, probes, optional, outcome) + "\n").c_str()
                 : outcome_text(outcome, this_kernel).c_str(),
             stdout);
  if (outcome.missing)
    std::fprintf(stderr, "moontrace: %s: a probe is missing on %s\n", name.c_str(),
                 kernel_name.c_str());
  return outcome.missing ? 1 : 0;
}

}  // namespace mt
