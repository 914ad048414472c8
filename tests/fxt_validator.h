// Checks a trace against the rules of Perfetto's Fuchsia (FXT) importer, so
// that a trace our tests write is known to display correctly: what Perfetto
// would drop, misplace or leave unnamed is a problem.
//
// The rules, as the importer (fuchsia_trace_tokenizer / _parser, slice and
// flow trackers) applies them:
// - the trace starts with an initialization record (ticks per second);
// - every event on a thread track (instant, begin, end, complete, flow) has
//   a thread kernel object for its tid whose `process` argument, a koid, is
//   its pid;
// - events are taken in timestamp order, equal timestamps in file order;
//   begin/end nest per thread: no end without a begin, the end's name is
//   the innermost open begin's, nothing is left open at the end; begins
//   and ends of a thread come in non-decreasing time in the file; a
//   complete event ends after it starts and does not partly overlap
//   another (Perfetto drops it), nor ends while a begin nested in it is
//   still open (Perfetto truncates that one);
// - a flow point binds to the innermost slice on its thread (instants and
//   complete events included), which must be open at the point's time; with
//   none open the point is dropped (flow_no_enclosing_slice);
// - flow ids, keyed by (pid, id): no begin of an id already open
//   (flow_duplicate_id), no step or end without an open begin
//   (flow_step_without_start, flow_end_without_start); an id open in two
//   processes at once is a problem too, as the importers that key flows by
//   id alone link them;
// - at most 15 arguments; counter arguments are numbers.
#pragma once
#include <string>
#include <vector>

#include "trace/fxt_reader.h"

namespace mt::testing {

// Human-readable problems, "offset N: ...", in file order of detection;
// empty when Perfetto imports the records cleanly. At most 100 are listed,
// then one line counting the rest.
std::vector<std::string> perfetto_problems(const std::vector<FxtRecord> &records);

// The same for the trace file at `path`; a file that cannot be read or
// parsed is one problem.
std::vector<std::string> perfetto_problems_in_file(const std::string &path);

}  // namespace mt::testing
