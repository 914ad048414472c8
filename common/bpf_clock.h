// The clock of bpf_ktime_get_ns(), read from user space: times taken here
// and in probes are on one timeline.
#pragma once
#include <time.h>

#include <cstdint>

namespace mt {

inline uint64_t bpf_clock_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace mt
