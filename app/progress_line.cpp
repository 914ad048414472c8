// The trace's progress on one terminal line, redrawn each second.
#include "app/progress_line.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace mt {

ProgressLine::ProgressLine(RunLoop &loop, RunLoop::Clock::time_point start, const FxtSink *trace,
                           const uint64_t &lost)
    : shown_(trace && isatty(STDERR_FILENO)) {
  if (!shown_)
    return;
  loop.every(std::chrono::seconds(1), start, [=, this, &lost](RunLoop::Clock::time_point now) {
    double elapsed = std::chrono::duration<double>(now - start).count();
    uint64_t drawn = trace->events();
    std::fprintf(stderr, "\rmoontrace: %.0f s, %llu events, %.0f/s, %llu lost, %.1f MB in %s\033[K",
                 elapsed, (unsigned long long)drawn, double(drawn - events_),
                 (unsigned long long)lost, trace->bytes() / 1e6, trace->path().c_str());
    events_ = drawn;
  });
}

void ProgressLine::clear() {
  if (shown_)
    std::fputs("\r\033[K", stderr);
}

}  // namespace mt
