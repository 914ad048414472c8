// The end handlers, the trace's closing line, the maps printed at exit and their overflows.
#include "app/end_of_run.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "run/stop_signals.h"
#include "script/lua_interrupt.h"
#include "trace/gzip_file.h"

namespace mt {

namespace {

constexpr auto kEndHandlersTime = std::chrono::seconds(1);

std::string printed(const char *format, auto... values) {
  char line[512];
  std::snprintf(line, sizeof line, format, values...);
  return line;
}

}  // namespace

std::string run_end_handlers(const std::vector<ResolvedProbe> &user, LuaScript &script) {
  int signals_before = std::max(stop_signal_count(), 1);
  set_lua_limits(signals_before, std::chrono::steady_clock::now() + kEndHandlersTime);
  for (const auto &u : user) {
    if (probe_kind(u.name.kind).runs != RunsAt::End)
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

std::string finish_trace(std::unique_ptr<FxtSink> trace, std::optional<Error> &failure) {
  trace->close();
  if (trace->error()) {
    if (!failure)
      failure = Error(trace->failure());
    return "";
  }
  uint64_t drawn = trace->events(), bytes = trace->bytes(), orphans = trace->orphan_flow_points(),
           lanes = trace->lane_slices();
  std::string path = trace->path();
  trace.reset();
  struct stat written {};
  std::string wrote =
      is_gzip_path(path) && stat(path.c_str(), &written) == 0
          ? printed("wrote %llu drawn events (%.1f MB, %.1f MB gzipped) to %s",
                    (unsigned long long)drawn, bytes / 1e6, written.st_size / 1e6, path.c_str())
          : printed("wrote %llu drawn events (%.1f MB) to %s", (unsigned long long)drawn,
                    bytes / 1e6, path.c_str());
  // Perfetto would count such points as errors; they are left out, not hidden.
  if (orphans)
    wrote += printed(
        "\nmoontrace: %llu flow steps and ends left out: their flow's begin was not "
        "traced (it came before tracing began, or was lost or filtered out)",
        (unsigned long long)orphans);
  if (lanes)
    wrote += printed(
        "\nmoontrace: %llu slices would have overlapped others on their track, which "
        "Perfetto drops: they are on async tracks named after them",
        (unsigned long long)lanes);
  return wrote;
}

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

MapOverflows read_overflows(const Declaration &decl, const KernelMaps &maps) {
  MapOverflows out;
  for (const auto &a : decl.aggregations)
    out.dropped.push_back(maps.aggregation(a.id).dropped);
  for (const auto &l : decl.latencies)
    out.latencies.push_back(maps.latency(l.id));
  out.flow_marks_taken = maps.flow_marks_taken();
  return out;
}

std::string overflow_text(const Declaration &decl, const MapOverflows &overflows, bool verbose) {
  std::string out;
  for (size_t i = 0; i < decl.aggregations.size() && i < overflows.dropped.size(); i++)
    if (uint64_t dropped = overflows.dropped[i]) {
      const auto &a = decl.aggregations[i];
      out += printed("moontrace: %s '%s' was full (%u keys): %llu updates dropped; raise size=\n",
                     agg_kind_name(a.kind), a.name.c_str(), a.size, (unsigned long long)dropped);
    }
  for (size_t i = 0; i < decl.latencies.size() && i < overflows.latencies.size(); i++) {
    const auto &l = decl.latencies[i];
    const LatencyCounts &c = overflows.latencies[i];
    if (verbose) {
      out += printed(
          "moontrace: latency '%s': %llu starts, %llu restarts, %llu matched, %llu "
          "unmatched stops, %llu pending, %llu evicted, %llu dropped\n",
          l.name.c_str(), (unsigned long long)c.starts, (unsigned long long)c.restarts,
          (unsigned long long)c.matched, (unsigned long long)c.unmatched,
          (unsigned long long)c.pending, (unsigned long long)c.evicted(),
          (unsigned long long)c.dropped);
      continue;
    }
    if (c.evicted())
      out += printed("moontrace: latency '%s': %llu starts evicted before their stop (size=%u)\n",
                     l.name.c_str(), (unsigned long long)c.evicted(), l.size);
    if (c.dropped)
      out += printed(
          "moontrace: latency '%s': %llu starts the kernel could not keep (out of memory, or "
          "its storage busy in an interrupted program): their stops were not timed\n",
          l.name.c_str(), (unsigned long long)c.dropped);
  }
  if (overflows.flow_marks_taken)
    out += printed(
        "moontrace: %llu flows begun in the traced processes found their place in the table "
        "of flows to follow elsewhere taken by another: their later points outside those "
        "processes, if any, were not drawn\n",
        (unsigned long long)overflows.flow_marks_taken);
  return out;
}

}  // namespace mt
