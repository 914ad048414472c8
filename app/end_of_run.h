// What runs and is told once tracing stopped: the end handlers, the
// trace's closing line, the aggregations and maps printed at exit, and
// the maps that overflowed.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/declaration.h"
#include "common/error.h"
#include "kernel/probe_resolver.h"
#include "output/output.h"
#include "run/kernel_maps.h"
#include "script/lua_script.h"
#include "trace/fxt_sink.h"

namespace mt {

// Runs the end handlers. They get a second; a second stop signal cuts
// them at once (the first, even when the traced work ended first, is a
// request to stop that they are already answering). Returns the error
// that ended them, or "".
std::string run_end_handlers(const std::vector<ResolvedProbe> &user, LuaScript &script);

// Draws what is pending and closes the trace: a gzipped trace is whole
// once its stream is finished. Returns the line that tells what it holds
// (and a second one counting flow points left out, if any),
// or "" and sets `failure` when it could not be written.
std::string finish_trace(std::unique_ptr<FxtSink> trace, std::optional<Error> &failure);

// What bpftrace users expect at exit: every aggregation, and the maps the
// script asked to see.
void print_at_exit(const Declaration &decl, LuaScript &script, Output &output);

// Aggregations whose map filled up and latency starts pushed out before
// their stop: the figures are then incomplete, and the user must know.
struct MapOverflows {
  std::vector<uint64_t> dropped;         // updates, by aggregation id
  std::vector<LatencyCounts> latencies;  // by latency id
  uint64_t flow_marks_taken = 0;         // -p/-c: flows no longer followed outside
};
MapOverflows read_overflows(const Declaration &decl, const KernelMaps &maps);
// Lines for stderr; with `verbose`, every latency's counts.
std::string overflow_text(const Declaration &decl, const MapOverflows &overflows, bool verbose);

}  // namespace mt
