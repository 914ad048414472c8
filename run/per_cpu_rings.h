// The per-CPU BPF ring buffers, mapped to be read, and the array of maps
// that holds them, made on a thread of their own while the run finds and
// loads its programs. Mapping costs about 1 ms a ring, and installing them
// waits for an RCU grace period (every update of a map-in-map does: about
// 10 ms here). Nothing runs a program before attaching, so that wait
// protects nothing here: the run goes on as soon as the rings are in place.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "run/ring_reader.h"

namespace mt {

class PerCpuRings {
 public:
  // One ring of `bytes` per possible CPU (see ring_buffer_bytes()).
  explicit PerCpuRings(uint32_t bytes);
  // Waits for the installing thread, whose grace period is over by then
  // unless the run was very short.
  ~PerCpuRings();
  PerCpuRings(const PerCpuRings &) = delete;
  PerCpuRings &operator=(const PerCpuRings &) = delete;

  // The array of maps, for the object to use instead of its own; once
  // every ring is in it. Throws mt::Error when they could not be made;
  // a stop signal while waiting stops as before tracing.
  int outer_fd();
  // The rings, by CPU, and each mapped to be read; valid while this lives.
  const std::vector<int> &ring_fds();
  std::vector<RingReader> &readers();
  uint32_t bytes() const { return bytes_; }

 private:
  void make();
  void wait_until_made();

  uint32_t bytes_;
  int cpus_;
  std::vector<UniqueFd> rings_;
  std::vector<int> ring_fds_;
  std::vector<RingReader> readers_;
  UniqueFd outer_;
  std::mutex mutex_;
  std::condition_variable made_;
  bool done_ = false;
  std::exception_ptr error_;
  std::atomic<int> install_error_ = 0;  // errno of a failed install
  std::thread thread_;
};

}  // namespace mt
