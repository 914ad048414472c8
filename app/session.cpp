// Runs one invocation: wires the stages, from the command line to the finished outputs.
#include "app/session.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>

#include "app/check_command.h"
#include "app/cli.h"
#include "app/compile_step.h"
#include "app/end_of_run.h"
#include "app/front_end_cache.h"
#include "app/info_commands.h"
#include "app/loss_report.h"
#include "app/package_step.h"
#include "app/progress_line.h"
#include "app/record_router.h"
#include "app/run_loop.h"
#include "app/run_state.h"
#include "app/target_filter_note.h"
#include "bpf_headers/mt_abi.h"
#include "codegen/c_generator.h"
#include "codegen/expression_policy.h"
#include "common/bpf_clock.h"
#include "common/error.h"
#include "common/json_writer.h"
#include "compiler/tracing_policy.h"
#include "kernel/btf_file_facts.h"
#include "kernel/probe_resolver.h"
#include "output/output.h"
#include "output/output_file.h"
#include "run/bpf_loader.h"
#include "run/bpf_teardown.h"
#include "run/child_process.h"
#include "run/event_stream.h"
#include "run/kernel_maps.h"
#include "run/maps_ahead.h"
#include "run/per_cpu_rings.h"
#include "run/process_tree.h"
#include "run/record_decoder.h"
#include "run/stack_resolver.h"
#include "run/stop_signals.h"
#include "run/target_process.h"
#include "script/lua_interrupt.h"
#include "script/lua_script.h"
#include "script/lua_values.h"
#include "script/script_params.h"
#include "trace/fxt_sink.h"

namespace mt {

namespace {

using Clock = std::chrono::steady_clock;

int run(const Options &options) {
  if (auto status = run_info_command(options))
    return *status;
  if (options.script.empty())
    throw Error("no script given (see moontrace --help)");
  // From here on a stop signal is a request to stop; dump and list above
  // die of it, as filters do.
  install_stop_signal_handlers();
  if (options.pack)
    return run_pack(options);

  Output output;
  output.set_json(options.json);
  output.set_folded(options.folded);
  ScriptArgs args(options.script_args);
  std::optional<Package> package;
  if (options.script.ends_with(".mtpkg"))
    package = load_package(options.script, options.expect_digest, options.signers);
  ScriptSource source = package ? ScriptSource{package->script_name, package->script, false, {}}
                                : load_script_source(options.script);
  report_hidden(source);
  SandboxOptions sandbox = package ? package_sandbox(*package, options.unsafe)
                                   : SandboxOptions{options.unsafe, module_dirs_for(source.path)};
  // check --btf: the facts of the kernel whose BTF that is, not this one's.
  std::unique_ptr<KernelFacts> kernel_facts =
      options.check_btf.empty() ? std::make_unique<KernelFacts>()
                                : std::make_unique<BtfFileFacts>(options.check_btf);
  KernelFacts &kernel = *kernel_facts;
  LuaScript script(std::move(source), sandbox, args, output);
  script.set_kernel_facts(&kernel);
  script.set_output_path(options.output);
  // Scripts joined by '+': one declaration, each script its own options.
  std::deque<ScriptArgs> more_args;
  std::vector<LuaScript::More> more;
  bool help = args.wants_help();
  for (const auto &m : options.more_scripts) {
    help = help || more_args.emplace_back(m.args).wants_help();
    more.push_back({load_script_source(m.script), &more_args.back()});
    report_hidden(more.back().source);
  }
  script.set_help(help);
  bool runs = !options.check && !options.emit_c && !help;
  // The -c command, forked while this process is small (later, every write
  // here would copy a page until the command execs).
  std::unique_ptr<ChildProcess> child;
  if (runs && !options.command.empty())
    child = std::make_unique<ChildProcess>(options.command, options.json);
  FrontEndCache front_cache(ObjectCache::default_directory(), runs && !options.no_cache);
  std::string invocation = invocation_of(script.source(), more, options);
  auto maps_ahead = package ? nullptr : make_maps_ahead(invocation, front_cache, options);
  declare_answered(script, more, front_cache);
  const Declaration &decl = script.declaration();
  // Made while the C is found and loaded (per_cpu_rings.h).
  std::optional<PerCpuRings> rings;
  if (runs && has_kernel_probes(decl))
    rings.emplace(ring_buffer_bytes());
  if (help) {
    std::fputs(session_help(options.script, script.source().path, decl).c_str(), stdout);
    return 0;
  }
  args.check_all_used();
  for (const auto &a : more_args)
    a.check_all_used();
  for (const auto &notice : script.notices())
    std::fprintf(stderr, "moontrace: %s\n", notice.c_str());
  if (options.check)
    return run_check(options, script, kernel);
  // Files open before anything is attached, under temporary names until
  // tracing begins (output_file.h). A script that draws writes a trace,
  // which -o names; its text then goes to stdout.
  std::unique_ptr<FxtSink> trace;
  try {
    if (!decl.trace_file.empty() && !options.emit_c)
      trace = std::make_unique<FxtSink>(
          options.output.empty() ? OutputFile::open(decl.trace_file, OutputFile::Origin::Script,
                                                    options.unsafe, decl.trace_file_where)
                                 : OutputFile::open(options.output));
    else if (!options.output.empty())
      output.open(OutputFile::open(options.output));
  } catch (const Error &) {
    stop_if_signalled_before_tracing();  // a FIFO waiting for its reader, cut by a stop
    throw;
  }
  if (decl.probes.empty()) {
    ScriptLocation where;
    where.file = script.source().path;
    throw Error(
        "declares no probe, so there is nothing to trace (see 'Writing a script' in "
        "the README)",
        where);
  }
  if (!options.emit_c)
    check_bpf_usable();

  if (options.verbose)
    for (const auto &note : script.notes())
      std::fprintf(stderr, "moontrace: %s\n", note.c_str());
  FrontEndCache::Generated front = generate_or_reuse(decl, kernel, options, front_cache);
  if (options.verbose)
    for (const auto &note : front.notes)
      std::fprintf(stderr, "moontrace: %s\n", note.c_str());
  bool filter = options.pid || !options.command.empty();
  const GeneratedProgram &generated = front.program;
  if (std::string note = filter ? target_filter_note(decl, generated) : ""; !note.empty())
    std::fprintf(stderr, "moontrace: %s\n", note.c_str());
  if (options.emit_c) {
    std::fputs(generated.source.c_str(), stdout);
    return 0;
  }

  std::vector<char> object;
  std::string key;  // the object's in the cache
  if (!generated.probes.empty()) {
    object = package ? object_from_package(generated, *package, options.script)
                     : compile_with_cache(generated, decl, options, script.source(), &key);
    if (!package)
      front_cache.store_object_expected(invocation, key);
    // Cached and packaged objects too: the same C may have been compiled
    // under --unsafe.
    if (!options.unsafe)
      check_tracing_only({object.data(), object.size()}, generated, decl);
  }
  stop_if_signalled_before_tracing();

  std::unique_ptr<BpfProgram> program;
  std::unique_ptr<KernelMaps> maps;
  std::unique_ptr<StackResolver> stacks;  // names the frames of kstack and ustack
  std::unique_ptr<EventStream> events;
  std::vector<std::optional<RecordLayout>> layouts;
  std::unique_ptr<RecordRouter> router;
  RunState state;
  LoadSettings settings;
  settings.filter_targets = filter;
  settings.cgroup = options.cgroup;
  settings.wake_bytes = rings ? rings->bytes() / 8 : 0;  // no rings: nothing runs
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
  if (!generated.probes.empty()) {
    program = std::make_unique<BpfProgram>(object, generated, decl);
    for (const auto &p : generated.probes)
      layouts.push_back(p.record.empty() ? std::nullopt
                                         : layout_from_btf(program->btf(), p.record));
    if (trace)
      trace->plan(decl, generated, layouts);
    settings.params = program->pack_params(decl.params);
    settings.rings_fd = rings.value().outer_fd();
    if (maps_ahead)
      settings.made_ahead = maps_ahead->take(key, object);
    program->load(settings);
    settings.made_ahead.maps.clear();  // the load holds duplicates of those it took
    stop_if_signalled();
    maps = std::make_unique<KernelMaps>(*program, decl);
    stacks = std::make_unique<StackResolver>(*program, generated.announces_processes,
                                             options.command, options.pid);
    script.set_kernel_maps(maps.get());
    if (options.verbose)
      std::fprintf(stderr, "moontrace: loaded %zu BPF programs%s\n", program->program_count(),
                   program->how_loaded().c_str());
    // Where each probe's records go, looked up once rather than per record.
    std::vector<RecordRouter::Probe> routes;
    for (uint32_t id = 0; id < generated.probes.size(); id++)
      routes.push_back({layouts[id] ? &*layouts[id] : nullptr, trace && trace->draws(id),
                        script.has_handler(generated.probes[id].decl_id)});
    RecordRouter::Destinations to;
    to.thread_named = [&](auto data, uint32_t size) {
      stacks->process_seen(data, size);
      if (trace)
        trace->thread_named(data, size);
    };
    if (trace) {
      to.arrived = [&](uint32_t id, auto data, uint32_t size) {
        return trace->arrived(id, data, size);
      };
    }
    to.handle = [&](uint32_t id, auto data, uint32_t size) {
      script.call_event(generated.probes[id].decl_id,
                        [&](lua_State *L) { push_record_fields(L, *layouts[id], data, size); });
    };
    to.print = [&](uint32_t id, auto data, uint32_t size) {
      if (!output.json()) {
        output.write(format_record(*layouts[id], data, size) + "\n");
        return;
      }
      JsonWriter json;
      json.object().key("type").str("event").key("probe").str(generated.probes[id].probe_name);
      json.key("data").raw(record_json(*layouts[id], data, size));
      output.write(json.end().text() + "\n");
    };
    router = std::make_unique<RecordRouter>(std::move(routes), generated.thread_name_slot(),
                                            std::move(to), state);
    auto draw_record = [&](const unsigned char *data, uint32_t size) {
      uint32_t id;
      std::memcpy(&id, data, 4);
      trace->draw(id, data, size);
    };
    std::vector<uint32_t> record_bytes;
    for (const auto &layout : layouts)
      record_bytes.push_back(layout ? layout->size : 0);
    if (generated.record_slots() > layouts.size())  // thread names
      record_bytes.push_back(sizeof(struct mt_thread_name));
    events = std::make_unique<EventStream>(
        rings.value().ring_fds(), std::move(rings.value().readers()),
        program->map_fd(MT_NAME(MT_LOST)), program->program_fd(generated.flush_program),
        program->map_fd(MT_NAME(MT_STAGED)), generated.record_slots(),
        EventStream::Consumer{record_bytes,
                              [&](auto data, uint32_t size, uint64_t &draw_at) {
                                return router->take(data, size, draw_at);
                              },
                              draw_record});
    script.set_lost_counter([&events]() { return events->total_lost(); });
    program->attach(settings);
    // -c's child (not started), -p's process and children (once forks are followed)
    if (int root = child ? child->pid() : options.pid)
      for (int pid : process_subtree(root))
        program->add_target(pid);
    program->start_probes();
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

  auto start = state.now();
  state.end_after(start, options.duration);
  std::optional<TargetProcess> target;
  if (options.pid)
    target.emplace(options.pid);

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
    LossCounts counts{state.events, state.unprocessed, events->lost(), {}, program->runs_skipped()};
    for (const auto &probe : generated.probes)
      counts.probe_names.push_back(probe.probe_name);
    std::fputs(loss_text(counts).c_str(), stderr);
    if (output.json())
      output.write(loss_json(counts) + "\n");
  };

  // Loss shows in the trace as a counter, stepping when it happens.
  uint64_t lost_in_trace = 0;
  auto mark_loss = [&]() {
    if (!trace || !events)
      return;
    uint64_t total = events->total_lost();
    if (total != lost_in_trace)
      trace->lost(bpf_clock_ns(), lost_in_trace = total);
  };

  auto why_stop = [&]() {
    if (state.failure)
      return StopCause::Failure;
    if (stop_signal())
      return StopCause::Signal;
    if (script.exit_requested())
      return StopCause::ScriptExit;
    if (state.now() >= state.deadline)
      return StopCause::Duration;
    if (child && child->exited())
      return StopCause::CommandExited;
    if (target && target->exited())
      return StopCause::TargetExited;
    if (output.failed() || (trace && trace->error())) {
      state.failure = Error(output.failed() ? output.failure() : trace->failure());
      return StopCause::Failure;
    }
    return StopCause::None;
  };

  RunLoop loop(state);
  // Reading the loss costs a bpf() call per probe: every 100 ms.
  loop.every(std::chrono::milliseconds(100), start, [&](auto) { mark_loss(); });
  ProgressLine progress(loop, start, trace.get(), lost_in_trace);
  // What was written reaches the file within a second: a SIGKILL leaves a
  // trace readable up to its last whole record.
  loop.every(std::chrono::seconds(1), start, [&](auto) {
    if (trace)
      trace->flush();
    output.flush();
  });
  RunLoop::Records records;
  if (events) {
    records.wait = [&](int timeout_ms) { events->wait(timeout_ms); };
    records.take = [&] { return events->take(); };
  } else {
    records.wait = [](int timeout_ms) { usleep(timeout_ms > 0 ? timeout_ms * 1000 : 0); };
    records.take = [] { return uint64_t(0); };
  }
  auto begin = [&] {
    for (const auto &u : front.user) {
      if (probe_kind(u.name.kind).runs == RunsAt::Start)
        call_user_probe(u.decl_id);
      if (probe_kind(u.name.kind).runs == RunsAt::Period)
        loop.add_timer(u.decl_id, std::chrono::milliseconds(u.name.interval_ms), start);
    }
    if (child)
      child->start();
  };
  StopCause cause = loop.run(records, why_stop, begin, [&](int decl_id) {
    call_user_probe(decl_id);
    if (options.verbose)
      report_lost();
  });

  // The stop: the probes stop, so that the maps the end reads agree with
  // the trace, and what the kernel buffered is delivered. When it was asked for
  // (a signal, --duration, an error), in bounded time (see RunState); when
  // the work ended (the command or process exited, the script called
  // exit()), all of it, unless a stop signal comes then. A stop signal
  // cuts a busy handler at once.
  state.begin_stop(cause == StopCause::Signal || cause == StopCause::Duration ||
                   cause == StopCause::Failure);
  try {
    if (program)
      program->stop_probes();
    if (events) {
      events->drain();
      events->release_all();  // held back by a drain cut short
    }
    mark_loss();
  } catch (const Error &e) {
    if (!state.failure)
      state.failure = e;
  }
  progress.clear();  // the summary lines replace it
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
    if (child)
      child->end();
    if (program)
      exit_leaving_teardown_behind(1);
    return 1;
  }
  if (!wrote.empty())
    std::fprintf(stderr, "moontrace: %s\n", wrote.c_str());

  std::string end_error = run_end_handlers(front.user, script);
  int exit_code = end_error.empty() ? 0 : 1;
  try {
    if (maps)
      print_at_exit(decl, script, output);
    if (!output.flush())
      throw Error(output.failure());
    if (maps)
      std::fputs(overflow_text(decl, read_overflows(decl, *maps), options.verbose > 0).c_str(),
                 stderr);
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
  if (!output.close() && exit_code == 0) {
    std::fprintf(stderr, "moontrace: %s\n", output.failure().c_str());
    exit_code = 1;
  }
  if (child)
    child->end();  // SIGTERM, then SIGKILL: it does not outlive moontrace
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
    for (const auto &line : e.more_lines)
      std::fprintf(stderr, "moontrace: %s\n", line.c_str());
    if (verbose && !e.detail.empty())
      std::fprintf(stderr, "%s\n", e.detail.c_str());
    return 1;
  } catch (const ReportedFailure &) {
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
