// moontrace dump FILE.fxt: a trace as text, one record a line, or as JSON
// lines; a malformed trace is an error naming the offset.
#pragma once
#include <cstdio>
#include <string>

namespace mt {

// Prints the records of the trace at `path` to `out`; returns 0, or throws
// mt::Error when the file cannot be read or is not a valid trace.
int dump_trace(const std::string &path, bool json, std::FILE *out);

}  // namespace mt
