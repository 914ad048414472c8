#include "runtime/session.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include "compiler/c_generator.h"
#include "compiler/clang_compiler.h"
#include "compiler/error.h"
#include "compiler/object_cache.h"
#include "compiler/probe_resolver.h"
#include "compiler/source_locator.h"
#include "runtime/bpf_loader.h"
#include "runtime/child_process.h"
#include "runtime/cli.h"
#include "runtime/event_stream.h"
#include "runtime/fxt_dump.h"
#include "runtime/fxt_sink.h"
#include "runtime/gzip_file.h"
#include "runtime/kernel_maps.h"
#include "runtime/lua_script.h"
#include "runtime/output.h"
#include "runtime/probe_listing.h"
#include "runtime/record_decoder.h"
#include "runtime/script_params.h"

namespace mt {

namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}
// Interrupts the poll so that a -c command's exit stops tracing at once.
void on_child_signal(int) {}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a signal must wake the poll
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = on_child_signal;
  sigaction(SIGCHLD, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

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

std::vector<char> compile_with_cache(const GeneratedProgram &generated, const Options &options,
                                     const ScriptSource &script) {
  ObjectCache cache(ObjectCache::default_directory());
  std::string key = ObjectCache::key_for(generated.source);
  if (!options.no_cache)
    if (auto object = cache.load(key)) {
      if (options.verbose)
        std::fprintf(stderr, "moontrace: using cached object %s\n", key.c_str());
      return *object;
    }
  CompileOptions compile_options;
  for (const auto &p : generated.probes)
    if (!p.name.has_direct_btf_access())
      compile_options.rewrite_functions.insert(p.program);
  CompileResult result = compile_bpf(generated.source, compile_options);
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

struct RunState {
  uint64_t events = 0;
  std::optional<Error> handler_error;  // raised in a callback, rethrown after the poll
};

// Bytes of each per-CPU ring buffer: 4 MiB, or MOONTRACE_BUFFER_KB (a
// power of two, at least one page).
uint32_t ring_buffer_bytes() {
  const char *kb = std::getenv("MOONTRACE_BUFFER_KB");
  if (!kb || !*kb)
    return 4u << 20;
  char *end;
  unsigned long n = std::strtoul(kb, &end, 10);
  if (*end || n < 4 || n > (1u << 20) || (n & (n - 1)))
    throw Error(std::string("MOONTRACE_BUFFER_KB=") + kb +
                ": expected a power of two from 4 to 1048576");
  return static_cast<uint32_t>(n << 10);
}

// Detaching a tracepoint waits out an RCU grace period (25-85 ms here), so
// closing many costs seconds that the user would wait for after the work is
// done. Everything is written by now: a child keeps the links until this
// process is gone, and the kernel tears them down when the child exits.
[[noreturn]] void exit_leaving_teardown_behind() {
  std::fflush(nullptr);
  pid_t parent = getpid();
  if (fork() == 0) {
    for (int fd = 0; fd < 3; fd++)
      close(fd);  // whoever waits for our output's end must not wait for this
    while (getppid() == parent)
      usleep(1000);
    _exit(0);
  }
  _exit(0);
}

// The clock of bpf_ktime_get_ns(), for marks placed from user space.
uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

int list_scripts() {
  for (const auto &f : kScriptFiles) {
    std::string text = f.content;
    std::string first = text.substr(0, text.find('\n'));
    if (first.rfind("--", 0) == 0)
      first = first.substr(first.find_first_not_of("- "));
    std::string name = f.name;
    name = name.substr(0, name.size() - 4);
    if (first.rfind(name + ": ", 0) == 0)  // "-- demo: what it does"
      first = first.substr(name.size() + 2);
    std::printf("%-12s %s\n", name.c_str(), first.c_str());
  }
  return 0;
}

// What bpftrace users expect at exit: every aggregation, and the maps the
// script asked to see.
void print_at_exit(const Declaration &decl, LuaScript &script, Output &output) {
  bool first = true;
  auto separate = [&]() {
    if (!output.json() && !first)
      output.write("\n");
    first = false;
  };
  for (const auto &a : decl.aggregations)
    if (a.print_at_exit) {
      separate();
      script.print_aggregation(a.id);
    }
  for (size_t i = 0; i < decl.maps.size(); i++)
    if (decl.maps[i].print_at_exit) {
      separate();
      script.print_map(static_cast<int>(i));
    }
}

// Aggregations whose map filled up and latency starts pushed out before
// their stop: the figures are then incomplete, and the user must know.
void report_overflows(const Declaration &decl, KernelMaps &maps, bool verbose) {
  for (const auto &a : decl.aggregations)
    if (uint64_t dropped = maps.aggregation(a.id).dropped)
      std::fprintf(stderr,
                   "moontrace: %s '%s' was full (%u keys): %llu updates dropped; raise size=\n",
                   agg_kind_name(a.kind), a.name.c_str(), a.size, (unsigned long long)dropped);
  for (const auto &l : decl.latencies) {
    LatencyCounts c = maps.latency(l.id);
    if (verbose)
      std::fprintf(stderr,
                   "moontrace: latency '%s': %llu starts, %llu restarts, %llu matched, %llu "
                   "unmatched stops, %llu pending, %llu evicted\n",
                   l.name.c_str(), (unsigned long long)c.starts, (unsigned long long)c.restarts,
                   (unsigned long long)c.matched, (unsigned long long)c.unmatched,
                   (unsigned long long)c.pending, (unsigned long long)c.evicted());
    else if (c.evicted())
      std::fprintf(stderr,
                   "moontrace: latency '%s': %llu starts evicted before their stop (size=%u)\n",
                   l.name.c_str(), (unsigned long long)c.evicted(), l.size);
  }
}

int run(const Options &options) {
  if (options.help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }
  if (options.version) {
    std::puts("moontrace " MT_VERSION);
    return 0;
  }
  if (options.list_scripts)
    return list_scripts();
  if (!options.dump_file.empty())
    return dump_trace(options.dump_file, options.dump_json, stdout);
  if (options.list_probes) {
    KernelFacts kernel;
    if (!list_probes(options.list_pattern, options.verbose > 0, kernel, stdout))
      throw Error("no probes match '" + options.list_pattern + "'");
    return 0;
  }
  if (options.script.empty())
    throw Error("no script given (see moontrace --help)");

  Output output;
  output.set_json(options.json);
  ScriptArgs args(options.script_args);
  SandboxOptions sandbox{options.unsafe, module_dirs_for(options.script)};
  KernelFacts kernel;
  LuaScript script(load_script_source(options.script), sandbox, args, output);
  script.set_kernel_facts(&kernel);
  script.declare();
  const Declaration &decl = script.declaration();
  if (args.wants_help()) {
    std::fputs(params_help(options.script, decl.params).c_str(), stdout);
    return 0;
  }
  if (decl.probes.empty()) {
    ScriptLocation where;
    where.file = script.source().path;
    throw Error(
        "declares no probe, so there is nothing to trace (see 'Writing a script' in "
        "the README)",
        where);
  }
  // Files open before anything is attached. A script that draws writes a
  // trace, which -o names; its text then goes to stdout.
  std::unique_ptr<FxtSink> trace;
  if (!decl.trace_file.empty() && !options.emit_c)
    trace = std::make_unique<FxtSink>(options.output.empty() ? decl.trace_file : options.output);
  else if (!options.output.empty())
    output.open(options.output);
  args.check_all_used();
  for (const auto &notice : script.notices())
    std::fprintf(stderr, "moontrace: %s\n", notice.c_str());
  std::string why;
  if (!options.emit_c && !can_use_bpf(why))
    throw Error(why);

  Resolution resolution = resolve_probes(decl, kernel);
  if (options.verbose)
    for (const auto &note : script.notes())
      std::fprintf(stderr, "moontrace: %s\n", note.c_str());
  if (options.verbose)
    for (const auto &note : resolution.notes)
      std::fprintf(stderr, "moontrace: %s\n", note.c_str());
  bool filter = options.pid || !options.command.empty();
  GeneratorInput input;
  input.decl = &decl;
  input.resolution = &resolution;
  input.btf = resolution.types ? resolution.types : kernel.btf();
  if (filter)
    input.fork_format = kernel.tracepoint("sched", "sched_process_fork");
  if (!decl.trace_file.empty())
    input.rename_format = kernel.tracepoint("task", "task_rename");
  GeneratedProgram generated = generate_c(input);
  if (options.emit_c) {
    std::fputs(generated.source.c_str(), stdout);
    return 0;
  }

  std::vector<char> object;
  if (!resolution.probes.empty())
    object = compile_with_cache(generated, options, script.source());

  std::unique_ptr<ChildProcess> child;
  if (!options.command.empty())
    child = std::make_unique<ChildProcess>(options.command);

  std::unique_ptr<BpfProgram> program;
  std::unique_ptr<KernelMaps> maps;
  std::unique_ptr<EventStream> events;
  std::vector<std::optional<RecordLayout>> layouts;
  RunState state;
  LoadSettings settings;
  settings.filter_targets = filter;
  settings.verbose = options.verbose > 0;
  if (!resolution.probes.empty()) {
    program = std::make_unique<BpfProgram>(object, generated, decl);
    for (const auto &p : generated.probes)
      layouts.push_back(p.record.empty() ? std::nullopt
                                         : layout_from_btf(program->btf(), p.record));
    if (trace)
      trace->plan(decl, generated, layouts);
    settings.params = program->pack_params(decl.params);
    program->load(settings);
    maps = std::make_unique<KernelMaps>(*program, decl);
    script.set_kernel_maps(maps.get());
    if (options.verbose)
      std::fprintf(stderr, "moontrace: loaded %zu BPF programs\n", program->program_count());
    auto on_record = [&](const void *data, size_t size) {
      if (size < 4)
        return;
      uint32_t id;
      std::memcpy(&id, data, 4);
      if (id == generated.probes.size() && trace) {
        trace->thread_named(data, size);
        return;
      }
      if (id >= generated.probes.size() || !layouts[id])
        return;
      state.events++;
      int decl_id = generated.probes[id].decl_id;
      if (state.handler_error)
        return;
      try {
        bool drawn = trace && trace->draws(id);
        if (drawn)
          trace->record(id, data, size);
        if (script.has_handler(decl_id))
          script.call_event(decl_id,
                            [&](lua_State *L) { push_record_fields(L, *layouts[id], data, size); });
        else if (drawn)
          ;
        else if (output.json())
          output.write(
              "{\"type\":\"event\",\"probe\":" + json_string(generated.probes[id].probe_name) +
              ",\"data\":" + record_json(*layouts[id], data, size) + "}\n");
        else
          output.write(format_record(*layouts[id], data, size) + "\n");
      } catch (const Error &e) {
        state.handler_error = e;
      }
    };
    size_t slots = generated.probes.size() + (generated.naming_programs.empty() ? 0 : 1);
    events = std::make_unique<EventStream>(program->map_fd("mt_rings"), program->map_fd("mt_lost"),
                                           slots, ring_buffer_bytes(), on_record);
    script.set_lost_counter([&events]() { return events->total_lost(); });
    if (options.pid)
      program->add_target(options.pid);
    if (child)
      program->add_target(child->pid());
    program->attach(settings);
    if (options.verbose)
      for (const auto &p : generated.probes)
        std::fprintf(stderr, "moontrace: attached %s\n", p.probe_name.c_str());
  }
  size_t attached = generated.probes.size();
  std::fprintf(stderr, "moontrace: attached %zu probe%s; Ctrl-C to stop\n", attached,
               attached == 1 ? "" : "s");
  if (output.json())
    output.write("{\"type\":\"attached_probes\",\"data\":{\"probes\":" + std::to_string(attached) +
                 "}}\n");

  struct Timer {
    int decl_id;
    Clock::duration period;
    Clock::time_point due;
  };
  std::vector<Timer> timers;
  auto start = Clock::now();
  for (const auto &u : resolution.user) {
    if (u.name.kind == ProbeKind::Begin)
      script.call(u.decl_id);
    if (u.name.kind == ProbeKind::Interval)
      timers.push_back({u.decl_id, std::chrono::milliseconds(u.name.interval_ms),
                        start + std::chrono::milliseconds(u.name.interval_ms)});
  }
  if (child)
    child->start();

  auto report_lost = [&]() {
    if (!events)
      return;
    auto lost = events->lost();
    uint64_t total = 0;
    for (auto n : lost)
      total += n;
    std::fprintf(stderr, "moontrace: %llu events, %llu lost\n", (unsigned long long)state.events,
                 (unsigned long long)total);
    std::string by_probe;
    for (size_t i = 0; i < lost.size(); i++) {
      if (!lost[i])
        continue;
      std::string name =
          i < generated.probes.size() ? generated.probes[i].probe_name : "thread names";
      std::fprintf(stderr, "moontrace:   lost %llu from %s\n", (unsigned long long)lost[i],
                   name.c_str());
      by_probe += (by_probe.empty() ? "" : ",") + json_string(name) + ":" + std::to_string(lost[i]);
    }
    if (output.json())
      output.write(
          "{\"type\":\"lost_events\",\"data\":{\"events\":" + std::to_string(state.events) +
          ",\"lost\":" + std::to_string(total) + ",\"probes\":{" + by_probe + "}}}\n");
  };

  // Loss shows in the trace as a counter, stepping when it happens; read
  // every 100 ms, as reading it costs a bpf() call per probe.
  uint64_t lost_in_trace = 0;
  auto next_loss_check = Clock::now();
  auto mark_loss = [&]() {
    if (!trace || !events)
      return;
    next_loss_check = Clock::now() + std::chrono::milliseconds(100);
    uint64_t total = events->total_lost();
    if (total != lost_in_trace)
      trace->lost(monotonic_ns(), lost_in_trace = total);
  };

  // On a terminal, a line that tells how the trace is growing.
  bool status_line = trace && isatty(STDERR_FILENO);
  auto next_status = start + std::chrono::seconds(1);
  uint64_t status_events = 0;
  auto show_status = [&](Clock::time_point now) {
    double elapsed = std::chrono::duration<double>(now - start).count();
    uint64_t drawn = trace->events();
    std::fprintf(stderr, "\rmoontrace: %.0f s, %llu events, %.0f/s, %llu lost, %.1f MB in %s\033[K",
                 elapsed, (unsigned long long)drawn, double(drawn - status_events),
                 (unsigned long long)lost_in_trace, trace->bytes() / 1e6, trace->path().c_str());
    status_events = drawn;
  };

  auto deadline = options.duration > 0
                      ? start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.duration))
                      : Clock::time_point::max();
  while (!g_stop_signal && !script.exit_requested()) {
    auto now = Clock::now();
    if (now >= deadline)
      break;
    if (child && child->exited())
      break;
    // Probes wake us only when a ring is filling up: poll every 10 ms.
    auto wake = std::min(deadline, now + std::chrono::milliseconds(10));
    for (const auto &t : timers)
      wake = std::min(wake, t.due);
    int timeout = (int)std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
    if (events) {
      // Records rarely wake the poll (see mt_reserve): take what is there.
      events->poll(std::max(timeout, 0));
      events->drain();
    } else if (timeout > 0) {
      usleep(timeout * 1000);
    }
    if (state.handler_error)
      throw *state.handler_error;
    if (trace) {
      // Per-CPU buffers deliver out of order: draw what is surely complete.
      uint64_t watermark = monotonic_ns() - 1000000;
      events->drain();
      trace->release(watermark);
    }
    now = Clock::now();
    if (now >= next_loss_check)
      mark_loss();
    if (status_line && now >= next_status) {
      show_status(now);
      next_status += std::chrono::seconds(1);
    }
    for (auto &t : timers) {
      if (now < t.due)
        continue;
      t.due += t.period;
      if (t.due < now)
        t.due = now + t.period;
      script.call(t.decl_id);
      if (options.verbose)
        report_lost();
    }
    if (std::ferror(output.file()))
      break;
  }
  if (events)
    events->drain();
  mark_loss();
  if (status_line)
    std::fputs("\r\033[K", stderr);  // the summary lines replace it
  if (trace) {
    // Closed now: a gzipped trace is whole once its stream is finished.
    trace->release(UINT64_MAX);
    uint64_t drawn = trace->events(), bytes = trace->bytes();
    std::string path = trace->path();
    trace.reset();
    struct stat written {};
    if (is_gzip_path(path) && stat(path.c_str(), &written) == 0)
      std::fprintf(stderr, "moontrace: wrote %llu drawn events (%.1f MB, %.1f MB gzipped) to %s\n",
                   (unsigned long long)drawn, bytes / 1e6, written.st_size / 1e6, path.c_str());
    else
      std::fprintf(stderr, "moontrace: wrote %llu drawn events (%.1f MB) to %s\n",
                   (unsigned long long)drawn, bytes / 1e6, path.c_str());
  }
  if (state.handler_error)
    throw *state.handler_error;
  for (const auto &u : resolution.user)
    if (u.name.kind == ProbeKind::End)
      script.call(u.decl_id);
  if (maps)
    print_at_exit(decl, script, output);
  output.flush();
  if (maps)
    report_overflows(decl, *maps, options.verbose > 0);
  report_lost();
  if (child && !child->exited())
    child->terminate();
  output.flush();
  if (program)
    exit_leaving_teardown_behind();
  return 0;
}

}  // namespace

int run_moontrace(int argc, char **argv) {
  install_signal_handlers();
  int verbose = 0;
  try {
    Options options = parse_command_line(argc, argv);
    verbose = options.verbose;
    return run(options);
  } catch (const Error &e) {
    std::fprintf(stderr, "moontrace: %s\n", e.located().c_str());
    if (verbose && !e.detail.empty())
      std::fprintf(stderr, "%s\n", e.detail.c_str());
    return 1;
  }
}

}  // namespace mt
