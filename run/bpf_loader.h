// A compiled object into the kernel: opened from memory, read-only
// settings written, loaded (verifier failures tied to script lines), and
// every probe attached.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen/c_generator.h"
#include "run/cgroup_filter.h"
#include "run/kernel_btf_ahead.h"
#include "run/shared_maps.h"

struct bpf_object;
struct bpf_program;
struct bpf_link;
struct btf;

namespace mt {

struct LoadSettings {
  std::vector<char> params;  // struct mt_params bytes, laid out per the object's BTF
  bool filter_targets = false;
  uint64_t wake_bytes = 1 << 19;  // a ring holding more wakes the reader at every record
  bool verbose = false;           // keep the kernel's verifier log in errors
  bool unsafe = false;            // --unsafe: maps may be pinned, programs of any type load
  CgroupFilter cgroup;            // --cgroup
  int rings_fd = -1;              // the per-CPU rings' array (per_cpu_rings.h); -1: an empty one
  // Maps made ahead for this object (maps_ahead.h); each one whose
  // definition is still the object's is used, its descriptor duplicated.
  MapsMadeAhead made_ahead;
};

// Sizes OBJ's maps (opened, not loaded) for a run with FILTER_TARGETS
// (-p/-c) and MARKS (flows marked: -p/-c or --cgroup), as load() does.
void size_maps_for_run(struct bpf_object *obj, bool filter_targets, bool marks);

class BpfProgram {
 public:
  // Opens the object; nothing reaches the kernel yet.
  BpfProgram(const std::vector<char> &object, const GeneratedProgram &generated,
             const Declaration &decl);
  ~BpfProgram();
  BpfProgram(const BpfProgram &) = delete;
  BpfProgram &operator=(const BpfProgram &) = delete;

  const struct btf *btf() const;
  // Lays out parameter values as the object's struct mt_params expects.
  std::vector<char> pack_params(const std::vector<Param> &params) const;

  // Loads every program; throws mt::Error naming the probe's script line.
  void load(const LoadSettings &settings);
  // Attaches every probe, to record from start_probes() on (the followers
  // of -p/-c's children from now); throws mt::Error with the reason and a
  // remedy.
  void attach(const LoadSettings &settings);
  void start_probes();
  void add_target(unsigned pid);
  // From now on probes record and count nothing (mt_run_stopped), and
  // those running have finished: the rings then hold all there will be.
  void stop_probes();

  int map_fd(const std::string &name) const;
  // A loaded program's descriptor, -1 if there is none of that name.
  int program_fd(const std::string &name) const;
  // A loaded map's fd and the BTF ids of its key and value; fd -1 if absent.
  struct MapInfo {
    int fd = -1;
    int key_type = 0, value_type = 0;
    int type = 0;  // enum bpf_map_type
  };
  MapInfo map_info(const std::string &name) const;
  size_t program_count() const;
  // Per probe: the runs the kernel skipped because a BPF program was
  // already running on that CPU (its recursion check). Probes on one tracepoint
  // share a program: its count goes to the first.
  std::vector<uint64_t> runs_skipped() const;
  // For -v, how the load went: whether the kernel verified the programs
  // in two halves at once, how many of the maps made ahead it took
  // (LoadSettings::made_ahead), and of the kernel BTF copies parsed ahead
  // (kernel_btf_ahead.h), when some were made.
  std::string how_loaded() const;

 private:
  // Whether probes run do nothing (mt_run_stopped): before all are attached
  // and after the stop.
  void set_stopped(bool stopped);
  // Without --unsafe: refuses pinned maps, map kinds tracing does not use
  // and programs that are not tracing programs.
  void check_tracing_only() const;
  // Moves about half the programs, by verification cost, to a second object
  // opened from the same ELF, both on maps made beforehand, so that the
  // kernel verifies the two halves at once; false if it is not worth it
  // or the maps cannot be made so.
  bool split_for_parallel_load();
  // The loaded program of that name, in either object.
  struct bpf_program *loaded_program(const std::string &name) const;

  std::vector<char> object_;  // the ELF, for the second object
  struct bpf_object *obj_ = nullptr;
  struct bpf_object *helper_ = nullptr;  // the second object, if split
  const GeneratedProgram &generated_;
  const Declaration &decl_;
  std::vector<struct bpf_link *> links_;
  size_t maps_taken_ahead_ = 0, maps_made_ahead_of_ = 0;
  KernelBtfAhead kernel_btf_ahead_;
};

// Throws unless this process may load BPF programs (root or CAP_BPF+CAP_PERFMON).
void check_bpf_usable();

}  // namespace mt
