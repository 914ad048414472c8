// On a terminal, a line on stderr that tells each second how the trace is
// growing, until the summary lines replace it.
#pragma once
#include <cstdint>

#include "app/run_loop.h"
#include "trace/fxt_sink.h"

namespace mt {

class ProgressLine {
 public:
  // Shown only with a trace and stderr a terminal; `lost` as it grows.
  ProgressLine(RunLoop &loop, RunLoop::Clock::time_point start, const FxtSink *trace,
               const uint64_t &lost);
  // Clears the line, for the summary's.
  void clear();

 private:
  bool shown_;
  uint64_t events_ = 0;  // at the last second
};

}  // namespace mt
