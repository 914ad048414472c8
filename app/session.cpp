// Runs one invocation: parse, compile, load, attach, trace, then stop and finish the outputs.
// Over 500 lines: run() wires every stage in one ~480-line function, still to be cut up.
#include "app/session.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "app/cli.h"
#include "app/loss_report.h"
#include "app/run_state.h"
#include "bpf_headers/mt_abi.h"
#include "codegen/c_generator.h"
#include "codegen/expression_policy.h"
#include "codegen/source_locator.h"
#include "common/error.h"
#include "common/json_writer.h"
#include "compiler/clang_compiler.h"
#include "compiler/object_cache.h"
#include "compiler/tracing_policy.h"
#include "kernel/probe_listing.h"
#include "kernel/probe_resolver.h"
#include "output/output.h"
#include "output/output_file.h"
#include "run/bpf_loader.h"
#include "run/child_process.h"
#include "run/event_stream.h"
#include "run/kernel_maps.h"
#include "run/record_decoder.h"
#include "script/lua_interrupt.h"
#include "script/lua_script.h"
#include "script/lua_values.h"
#include "script/script_params.h"
#include "trace/fxt_dump.h"
#include "trace/fxt_sink.h"
#include "trace/gzip_file.h"

namespace mt {

namespace {

using Clock = std::chrono::steady_clock;

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

// Clang runs on a thread of its own so that a stop signal is answered at
// once: nothing has been written yet, so the compile is abandoned and
// moontrace exits while it runs. MOONTRACE_TEST_SLOW_COMPILE_MS makes it
// slow for the tests of that.
CompileResult compile_unless_stopped(const std::string &source, const CompileOptions &options) {
  struct Job {
    std::string source;
    CompileOptions options;
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    CompileResult result;
    std::exception_ptr error;
  };
  auto job = std::make_shared<Job>();
  job->source = source;
  job->options = options;
  std::thread([job] {
    if (const char *ms = std::getenv("MOONTRACE_TEST_SLOW_COMPILE_MS"))
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
    CompileResult result;
    std::exception_ptr error;
    try {
      result = compile_bpf(job->source, job->options);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(job->mutex);
    job->result = std::move(result);
    job->error = error;
    job->done = true;
    job->finished.notify_one();
  }).detach();
  std::unique_lock lock(job->mutex);
  while (!job->finished.wait_for(lock, std::chrono::milliseconds(20), [&] { return job->done; }))
    stop_if_signalled_before_tracing();
  if (job->error)
    std::rethrow_exception(job->error);
  return std::move(job->result);
}

std::vector<char> compile_with_cache(const GeneratedProgram &generated, const Declaration &decl,
                                     const Options &options, const ScriptSource &script) {
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
  compile_options.line_files = source_files(decl);
  CompileResult result = compile_unless_stopped(generated.source, compile_options);
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

// Why tracing stopped.
enum class StopCause { None, Signal, Duration, ScriptExit, CommandExited, TargetExited, Failure };

constexpr auto kPollSlice = std::chrono::milliseconds(100);
constexpr auto kEndHandlersTime = std::chrono::seconds(1);
constexpr auto kFlushEvery = std::chrono::seconds(1);
constexpr uint64_t kBusyTakeBytes = 64 << 10;  // a take that found more takes again at once

// Bytes of each per-CPU ring buffer: MOONTRACE_BUFFER_KB (a power of two,
// large enough for a few of the 8 KiB batches programs hand over), or 64 MiB
// shared among the CPUs, from 1 to 8 MiB each: a storm fills 8 MiB in about
// 10 ms, the time a reader may wait for its CPU on a busy machine.
uint32_t ring_buffer_bytes() {
  const char *kb = std::getenv("MOONTRACE_BUFFER_KB");
  if (!kb || !*kb) {
    long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_CONF));
    return std::clamp(std::bit_floor(uint32_t((64u << 20) / cpus)), 1u << 20, 8u << 20);
  }
  char *end;
  unsigned long n = std::strtoul(kb, &end, 10);
  if (*end || n < 64 || n > (1u << 20) || (n & (n - 1)))
    throw Error(std::string("MOONTRACE_BUFFER_KB=") + kb +
                ": expected a power of two from 64 to 1048576");
  return static_cast<uint32_t>(n << 10);
}

// Detaching a tracepoint waits out an RCU grace period (25-85 ms here), so
// closing many costs seconds that the user would wait for after the work is
// done. A child keeps the links (its copies of our descriptors) until this
// process is gone, and the kernel tears them down when the child exits.
void hand_bpf_teardown_to_a_child() {
  std::fflush(nullptr);
  pid_t parent = getpid();
  if (fork() == 0) {
    for (int fd = 0; fd < 3; fd++)
      close(fd);  // whoever waits for our output's end must not wait for this
    while (getppid() == parent)
      usleep(1000);
    _exit(0);
  }
}

[[noreturn]] void exit_leaving_teardown_behind(int code) {
  hand_bpf_teardown_to_a_child();
  _exit(code);
}

// A descriptor that becomes readable when process `pid` exits (-p), or -1
// when it is already gone.
int open_pidfd(int pid) {
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

bool process_exited(int pidfd, int pid) {
  if (pidfd < 0)  // gone already, or a kernel without pidfd_open (before 5.3)
    return kill(pid, 0) != 0 && errno == ESRCH;
  pollfd p{pidfd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
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

// Draws what is pending and closes the trace: a gzipped trace is whole
// once its stream is finished. Returns the line that tells what it holds.
std::string finish_trace(std::unique_ptr<FxtSink> trace, std::optional<Error> &failure) {
  trace->close();
  if (trace->error()) {
    if (!failure)
      failure = Error(trace->failure());
    return "";
  }
  uint64_t drawn = trace->events(), bytes = trace->bytes();
  std::string path = trace->path();
  trace.reset();
  struct stat written {};
  char line[512];
  if (is_gzip_path(path) && stat(path.c_str(), &written) == 0)
    std::snprintf(line, sizeof line, "wrote %llu drawn events (%.1f MB, %.1f MB gzipped) to %s",
                  (unsigned long long)drawn, bytes / 1e6, written.st_size / 1e6, path.c_str());
  else
    std::snprintf(line, sizeof line, "wrote %llu drawn events (%.1f MB) to %s",
                  (unsigned long long)drawn, bytes / 1e6, path.c_str());
  return line;
}

// Runs the end handlers once tracing stopped. They get a second; a second
// stop signal cuts them at once (the first, even when the traced work
// ended first, is a request to stop that they are already answering).
// Returns the error that ended them, or "".
std::string run_end_handlers(const Resolution &resolution, LuaScript &script) {
  int signals_before = std::max(stop_signal_count(), 1);
  set_lua_limits(signals_before, Clock::now() + kEndHandlersTime);
  for (const auto &u : resolution.user) {
    if (u.name.kind != ProbeKind::End)
      continue;
    try {
      script.call(u.decl_id);
    } catch (const LuaInterrupted &cut) {
      return cut.where + (stop_signal_count() > signals_before
                              ? "the end handler was interrupted by a stop signal"
                              : "the end handler was stopped: still running 1 s after tracing "
                                "stopped");
    } catch (const Error &e) {
      return e.located();
    }
  }
  return "";
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
  // From here on a stop signal is a request to stop; dump and list above
  // die of it, as filters do.
  install_stop_signal_handlers();

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
  // Files open before anything is attached, under temporary names until
  // tracing begins (output_file.h). A script that draws writes a trace,
  // which -o names; its text then goes to stdout.
  std::unique_ptr<FxtSink> trace;
  if (!decl.trace_file.empty() && !options.emit_c)
    trace = std::make_unique<FxtSink>(
        options.output.empty() ? OutputFile::open(decl.trace_file, OutputFile::Origin::Script,
                                                  options.unsafe, decl.trace_file_where)
                               : OutputFile::open(options.output));
  else if (!options.output.empty())
    output.open(OutputFile::open(options.output));
  if (decl.probes.empty()) {
    ScriptLocation where;
    where.file = script.source().path;
    throw Error(
        "declares no probe, so there is nothing to trace (see 'Writing a script' in "
        "the README)",
        where);
  }
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
  if (!options.unsafe)
    check_no_directives(decl);
  GeneratedProgram generated = generate_c(input);
  if (options.emit_c) {
    std::fputs(generated.source.c_str(), stdout);
    return 0;
  }

  std::vector<char> object;
  if (!resolution.probes.empty()) {
    object = compile_with_cache(generated, decl, options, script.source());
    // Cached objects too: the same C may have been compiled under --unsafe.
    if (!options.unsafe)
      check_tracing_only({object.data(), object.size()}, generated, decl);
  }
  stop_if_signalled_before_tracing();

  std::unique_ptr<ChildProcess> child;
  if (!options.command.empty())
    child = std::make_unique<ChildProcess>(options.command, options.json);

  std::unique_ptr<BpfProgram> program;
  std::unique_ptr<KernelMaps> maps;
  std::unique_ptr<EventStream> events;
  std::vector<std::optional<RecordLayout>> layouts;
  std::vector<char> drawn_probe, handled_probe;  // by probe
  RunState state;
  LoadSettings settings;
  settings.filter_targets = filter;
  uint32_t ring_bytes = ring_buffer_bytes();
  settings.wake_bytes = ring_bytes / 8;
  settings.verbose = options.verbose > 0;
  // A stop signal while loading or attaching: the links are left to a
  // child to tear down, as at the end, so that the stop is prompt.
  auto stop_if_signalled = [&]() {
    if (!stop_signal())
      return;
    if (program) {
      hand_bpf_teardown_to_a_child();
      events.reset();
      maps.reset();
      (void)program.release();  // its descriptors close with the process
    }
    stop_if_signalled_before_tracing();
  };
  settings.unsafe = options.unsafe;
  if (!resolution.probes.empty()) {
    program = std::make_unique<BpfProgram>(object, generated, decl);
    for (const auto &p : generated.probes)
      layouts.push_back(p.record.empty() ? std::nullopt
                                         : layout_from_btf(program->btf(), p.record));
    if (trace)
      trace->plan(decl, generated, layouts);
    settings.params = program->pack_params(decl.params);
    program->load(settings);
    stop_if_signalled();
    maps = std::make_unique<KernelMaps>(*program, decl);
    script.set_kernel_maps(maps.get());
    if (options.verbose)
      std::fprintf(stderr, "moontrace: loaded %zu BPF programs\n", program->program_count());
    // Where each probe's records go, looked up once rather than per record.
    for (uint32_t id = 0; id < generated.probes.size(); id++) {
      drawn_probe.push_back(trace && trace->draws(id));
      handled_probe.push_back(script.has_handler(generated.probes[id].decl_id));
    }
    // Each record as it is found; a drawn one is drawn later, in time
    // order. Returns false to hand control back to the loop (see RunState).
    auto take_record = [&](const unsigned char *data, uint32_t size, uint64_t &draw_at) -> bool {
      if (size < 4)
        return true;
      uint32_t id;
      std::memcpy(&id, data, 4);
      if (id == generated.thread_name_slot() && trace) {
        trace->thread_named(data, size);
        return true;
      }
      if (id >= generated.probes.size() || !layouts[id])
        return true;
      RunState::Take take = state.take();
      if (take != RunState::Take::Process)
        return take == RunState::Take::Count;
      bool keep_taking = state.keep_taking();
      int decl_id = generated.probes[id].decl_id;
      try {
        bool drawn = drawn_probe[id];
        if (drawn)
          draw_at = trace->arrived(id, data, size);
        if (handled_probe[id]) {
          if (state.failure)  // the script is broken: its handlers run no more
            return state.stopping;
          script.call_event(decl_id,
                            [&](lua_State *L) { push_record_fields(L, *layouts[id], data, size); });
        } else if (drawn) {
        } else if (output.json()) {
          JsonWriter json;
          json.object().key("type").str("event").key("probe").str(generated.probes[id].probe_name);
          json.key("data").raw(record_json(*layouts[id], data, size));
          output.write(json.end().text() + "\n");
        } else {
          output.write(format_record(*layouts[id], data, size) + "\n");
        }
      } catch (const LuaInterrupted &) {
        state.unprocessed++;
        return state.stopping;  // while stopping, the next records are counted
      } catch (const Error &e) {
        if (!state.failure)
          state.failure = e;
        return state.stopping;  // while stopping, the next records are still drawn
      }
      return keep_taking;
    };
    auto draw_record = [&](const unsigned char *data, uint32_t size) {
      uint32_t id;
      std::memcpy(&id, data, 4);
      trace->draw(id, data, size);
    };
    std::vector<uint32_t> record_bytes;
    for (const auto &layout : layouts)
      record_bytes.push_back(layout ? layout->size : 0);
    if (!generated.naming_programs.empty())
      record_bytes.push_back(sizeof(struct mt_thread_name));
    events = std::make_unique<EventStream>(
        program->map_fd(MT_NAME(MT_RINGS)), program->map_fd(MT_NAME(MT_LOST)),
        program->program_fd(generated.flush_program), program->map_fd(MT_NAME(MT_STAGED)),
        generated.record_slots(), ring_bytes,
        EventStream::Consumer{record_bytes, take_record, draw_record});
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
  stop_if_signalled();
  // Tracing begins: the output files take the place of earlier ones, and
  // from here on every stop finishes them.
  if (trace)
    trace->commit();
  output.commit();
  size_t attached = generated.probes.size();
  std::fprintf(stderr, "moontrace: attached %zu probe%s; Ctrl-C to stop\n", attached,
               attached == 1 ? "" : "s");
  if (output.json())
    output.write(json_message("attached_probes",
                              JsonWriter().object().key("probes").num(attached).end().text()) +
                 "\n");

  struct Timer {
    int decl_id;
    Clock::duration period;
    Clock::time_point due;
  };
  std::vector<Timer> timers;
  auto start = Clock::now();
  if (options.duration > 0)
    state.deadline = start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options.duration));
  // A handler, interval or begin probe that loops is cut by a stop signal
  // or the end of --duration.
  set_lua_limits(0, state.deadline);
  int pidfd = options.pid ? open_pidfd(options.pid) : -1;

  // Runs a begin, interval or end handler: an error stops tracing and is
  // reported once the outputs are finished; an interruption was a stop.
  auto call_user_probe = [&](int decl_id) {
    try {
      script.call(decl_id);
    } catch (const LuaInterrupted &) {
    } catch (const Error &e) {
      if (!state.failure)
        state.failure = e;
    }
  };

  auto report_lost = [&]() {
    if (!events)
      return;
    LossCounts counts{state.events, state.unprocessed, events->lost(), {}};
    for (const auto &probe : generated.probes)
      counts.probe_names.push_back(probe.probe_name);
    std::fputs(loss_text(counts).c_str(), stderr);
    if (output.json())
      output.write(loss_json(counts) + "\n");
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

  auto why_stop = [&]() {
    if (state.failure)
      return StopCause::Failure;
    if (stop_signal())
      return StopCause::Signal;
    if (script.exit_requested())
      return StopCause::ScriptExit;
    if (Clock::now() >= state.deadline)
      return StopCause::Duration;
    if (child && child->exited())
      return StopCause::CommandExited;
    if (options.pid && process_exited(pidfd, options.pid))
      return StopCause::TargetExited;
    if (output.failed() || (trace && trace->error())) {
      state.failure = Error(output.failed() ? output.failure() : trace->failure());
      return StopCause::Failure;
    }
    return StopCause::None;
  };

  StopCause cause = StopCause::None;
  // Everything until the outputs are finished runs in here: an error is
  // kept for after them, so that the trace written so far stays whole.
  try {
    for (const auto &u : resolution.user) {
      if (u.name.kind == ProbeKind::Begin)
        call_user_probe(u.decl_id);
      if (u.name.kind == ProbeKind::Interval)
        timers.push_back({u.decl_id, std::chrono::milliseconds(u.name.interval_ms),
                          start + std::chrono::milliseconds(u.name.interval_ms)});
    }
    if (child)
      child->start();
    auto next_flush = Clock::now() + kFlushEvery;
    uint64_t taken = 0;  // bytes, by the last take
    while ((cause = why_stop()) == StopCause::None) {
      auto now = Clock::now();
      // Probes wake us only when a ring is filling up: poll every 10 ms.
      auto wake = std::min(state.deadline, now + std::chrono::milliseconds(10));
      for (const auto &t : timers)
        wake = std::min(wake, t.due);
      int timeout = (int)std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
      state.slice_end = wake + kPollSlice;
      if (events) {
        // Records rarely wake us (see mt_reserve): after a take that found
        // little, wait for a wake-up or the next tick; while they keep
        // coming, take again at once.
        if (taken < kBusyTakeBytes)
          events->wait(std::max(timeout, 0));
        state.slice_end = Clock::now() + kPollSlice;
        taken = events->take();
      } else if (timeout > 0) {
        usleep(timeout * 1000);
      }
      now = Clock::now();
      if (now >= next_loss_check)
        mark_loss();
      if (status_line && now >= next_status) {
        show_status(now);
        next_status += std::chrono::seconds(1);
      }
      // What was written reaches the file within a second: a SIGKILL
      // leaves a trace readable up to its last whole record.
      if (now >= next_flush) {
        if (trace)
          trace->flush();
        output.flush();
        next_flush = now + kFlushEvery;
      }
      for (auto &t : timers) {
        if (now < t.due || why_stop() != StopCause::None)
          continue;
        t.due += t.period;
        if (t.due < now)
          t.due = now + t.period;
        call_user_probe(t.decl_id);
        if (options.verbose)
          report_lost();
      }
    }
  } catch (const Error &e) {
    if (!state.failure)
      state.failure = e;
    cause = StopCause::Failure;
  } catch (const std::exception &e) {
    if (!state.failure)
      state.failure = Error(e.what());
    cause = StopCause::Failure;
  }

  // The stop: what the kernel buffered is delivered. When it was asked for
  // (a signal, --duration, an error), in bounded time (see RunState); when
  // the work ended (the command or process exited, the script called
  // exit()), all of it, unless a stop signal comes then. A stop signal
  // cuts a busy handler at once.
  state.begin_stop(cause == StopCause::Signal || cause == StopCause::Duration ||
                   cause == StopCause::Failure);
  try {
    if (events) {
      events->drain();
      events->release_all();  // held back by a drain cut short
    }
    mark_loss();
  } catch (const Error &e) {
    if (!state.failure)
      state.failure = e;
  }
  if (status_line)
    std::fputs("\r\033[K", stderr);  // the summary lines replace it
  std::string wrote = trace ? finish_trace(std::move(trace), state.failure) : "";
  if (state.failure) {
    // The trace is finished; the error comes first, the trace kept after.
    output.close();
    std::fprintf(stderr, "moontrace: %s\n", state.failure->located().c_str());
    if (options.verbose && !state.failure->detail.empty())
      std::fprintf(stderr, "%s\n", state.failure->detail.c_str());
    if (!wrote.empty())
      std::fprintf(stderr, "moontrace: %s\n", wrote.c_str());
    report_lost();
    if (child && !child->exited())
      child->terminate();
    if (program)
      exit_leaving_teardown_behind(1);
    return 1;
  }
  if (!wrote.empty())
    std::fprintf(stderr, "moontrace: %s\n", wrote.c_str());

  std::string end_error = run_end_handlers(resolution, script);
  int exit_code = end_error.empty() ? 0 : 1;
  try {
    if (maps)
      print_at_exit(decl, script, output);
    if (!output.flush())
      throw Error(output.failure());
    if (maps)
      report_overflows(decl, *maps, options.verbose > 0);
  } catch (const Error &e) {
    if (end_error.empty())
      end_error = e.located();
    exit_code = 1;
  }
  report_lost();
  if (!end_error.empty())
    std::fprintf(stderr, "moontrace: %s\n", end_error.c_str());
  // The -c command's failure is moontrace's, when it ended tracing.
  if (child && cause == StopCause::CommandExited && !child->failure().empty()) {
    std::fprintf(stderr, "moontrace: %s\n", child->failure().c_str());
    if (exit_code == 0)
      exit_code = child->exit_status();
  }
  if (child && !child->exited())
    child->terminate();
  if (!output.close() && exit_code == 0) {
    std::fprintf(stderr, "moontrace: %s\n", output.failure().c_str());
    exit_code = 1;
  }
  if (pidfd >= 0)
    close(pidfd);
  if (program)
    exit_leaving_teardown_behind(exit_code);
  return exit_code;
}

}  // namespace

int run_moontrace(int argc, char **argv) {
  ignore_sigpipe();
  int verbose = 0;
  try {
    Options options = parse_command_line(argc, argv);
    verbose = options.verbose;
    try {
      return run(options);
    } catch (const LuaInterrupted &) {
      // Only the script's top level runs before tracing begins.
      throw StoppedBeforeTracing{stop_signal() ? stop_signal() : SIGINT};
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "moontrace: %s\n", e.located().c_str());
    if (verbose && !e.detail.empty())
      std::fprintf(stderr, "%s\n", e.detail.c_str());
    return 1;
  } catch (const StoppedBeforeTracing &stopped) {
    // A compile may still run on its thread: leave without waiting for it
    // or running destructors under it.
    std::fprintf(stderr, "moontrace: stopped before tracing began (%s)\n",
                 signal_name(stopped.signal).c_str());
    std::fflush(nullptr);
    _exit(128 + stopped.signal);
  }
}

}  // namespace mt
