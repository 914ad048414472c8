// A private loop block device for end-to-end tests of block-layer probes:
// a known device, so tests can filter on it and count its requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/e2e/e2e_support.h"

namespace e2e {

// Attaches a sparse backing file of `size` bytes in a private temp dir to a
// free /dev/loopN (LOOP_CTL_GET_FREE + LOOP_CONFIGURE, no losetup needed)
// and sets queue/nomerges to 2, so each O_DIRECT write that fits the queue
// limits is exactly one request. `direct_io` makes the loop driver use
// direct I/O on the backing file (no page cache in between).
//
// Needs root. The constructor throws std::runtime_error with the reason
// when it cannot set the device up; GoogleTest reports that as a failure
// of the test. The destructor restores nomerges and detaches the device;
// LO_FLAGS_AUTOCLEAR detaches it too if the test process dies.
class LoopDevice {
 public:
  explicit LoopDevice(uint64_t size = 64ull << 20, bool direct_io = false);
  ~LoopDevice();
  LoopDevice(const LoopDevice &) = delete;
  LoopDevice &operator=(const LoopDevice &) = delete;

  const std::string &path() const { return path_; }  // "/dev/loopN"
  const std::string &name() const { return name_; }  // "loopN"
  // The kernel's dev_t, (major << 20) | minor: the `dev` field of the
  // block tracepoints (block_rq_issue, block_rq_complete, ...).
  uint64_t dev() const { return dev_; }
  uint64_t size() const { return size_; }
  // Whether the loop driver really does direct I/O (sysfs loop/dio).
  bool direct_io() const;

  // The fields of /sys/block/loopN/stat (see Documentation/block/stat.rst).
  std::vector<uint64_t> stat() const;
  // Field 5 of that file: write requests completed. Counted at completion,
  // so read it after the writer has exited.
  uint64_t writes_completed() const;

 private:
  void detach();

  TempDir dir_;
  std::string path_, name_, old_nomerges_;
  uint64_t dev_ = 0, size_ = 0;
  int fd_ = -1;  // held open so the device stays attached (autoclear)
};

// An ext4 filesystem made on a private LoopDevice (mkfs.ext4, package
// e2fsprogs) and mounted on a private directory, for tests of the vfs and
// ext4 layers with nothing else on it. Unmounted and detached at the end;
// the constructor throws std::runtime_error with the reason on failure.
class Ext4Mount {
 public:
  explicit Ext4Mount(uint64_t size = 64ull << 20);
  ~Ext4Mount();
  Ext4Mount(const Ext4Mount &) = delete;
  Ext4Mount &operator=(const Ext4Mount &) = delete;

  std::string dir() const { return mount_point_.path().string(); }
  const LoopDevice &device() const { return loop_; }

 private:
  LoopDevice loop_;
  TempDir mount_point_;
  bool mounted_ = false;
};

// The direct_writes workload: COUNT pwrites of SIZE bytes with O_DIRECT to
// `dev` at offsets 0, SIZE, 2*SIZE, ... With start_stopped its pid is
// known before it writes (Process::resume runs it).
Command direct_writes(const std::string &dev, uint64_t count, uint64_t size,
                      bool start_stopped = false);

}  // namespace e2e
