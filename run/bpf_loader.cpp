// Loads a compiled object with libbpf, fills read-only settings and attaches every probe.
#include "run/bpf_loader.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <set>
#include <system_error>
#include <thread>

#include "bpf_headers/mt_abi.h"
#include "common/error.h"
#include "common/regular_file.h"
#include "kernel/libbpf_messages.h"
#include "kernel/probe_resolver.h"
#include "run/load_failure.h"
#include "run/shared_maps.h"

namespace mt {

namespace {

// Below this much to verify (verification_weight: about 8 ms here) a
// second object costs about what it saves: it parses the kernel's BTF
// again.
constexpr size_t kWeightWorthSplitting = 8000;

// About how long the verifier takes over a program, in instructions: it
// walks a bounded loop's body once per iteration, so each backward jump
// counts for 200 (fitted on uring's programs, whose two loops take a third
// of the time).
size_t verification_weight(const struct bpf_program *prog) {
  const struct bpf_insn *insns = bpf_program__insns(prog);
  size_t count = bpf_program__insn_cnt(prog), weight = count;
  for (size_t i = 0; i < count; i++) {
    uint8_t kind = BPF_CLASS(insns[i].code), op = BPF_OP(insns[i].code);
    if ((kind == BPF_JMP || kind == BPF_JMP32) && op != BPF_CALL && op != BPF_EXIT &&
        insns[i].off < 0)
      weight += 200;
  }
  return weight;
}

struct bpf_map *find_map(struct bpf_object *obj, const std::string &suffix) {
  struct bpf_map *map;
  bpf_object__for_each_map(map, obj) {
    std::string name = bpf_map__name(map);
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return map;
  }
  return nullptr;
}

// Offset of a global variable within its data section, from BTF.
long variable_offset(const struct btf *btf, const char *section, const char *var) {
  int sec = btf__find_by_name_kind(btf, section, BTF_KIND_DATASEC);
  if (sec < 0)
    return -1;
  const struct btf_type *t = btf__type_by_id(btf, sec);
  const struct btf_var_secinfo *vs = btf_var_secinfos(t);
  for (int i = 0; i < btf_vlen(t); i++) {
    const struct btf_type *v = btf__type_by_id(btf, vs[i].type);
    if (std::strcmp(btf__name_by_offset(btf, v->name_off), var) == 0)
      return vs[i].offset;
  }
  return -1;
}

}  // namespace

// Targets are kept only under -p/-c, and flows marked only under -p/-c or
// --cgroup (mt_flow_marks.h): elsewhere those tables are never touched,
// and one slot is all they need (65,536 of a hash cost 2 ms to create).
void size_maps_for_run(struct bpf_object *obj, bool filter_targets, bool marks) {
  if (struct bpf_map *map = bpf_object__find_map_by_name(obj, MT_NAME(MT_STAGED)))
    bpf_map__set_max_entries(map, libbpf_num_possible_cpus());
  for (auto [name, used] :
       {std::pair{MT_NAME(MT_FLOW_MARKS), marks}, std::pair{MT_NAME(MT_TARGETS), filter_targets}})
    if (struct bpf_map *map = bpf_object__find_map_by_name(obj, name); map && !used)
      bpf_map__set_max_entries(map, 1);
}

void check_bpf_usable() {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0)
    throw Error(std::string("cannot read moontrace's capabilities: ") + std::strerror(errno));
  auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1; };
  if (!has(CAP_SYS_ADMIN) && !(has(CAP_BPF) && has(CAP_PERFMON)))
    throw Error(
        "moontrace needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs; run it with "
        "sudo");
}

BpfProgram::BpfProgram(const std::vector<char> &object, const GeneratedProgram &generated,
                       const Declaration &decl)
    : generated_(generated), decl_(decl) {
  keep_libbpf_messages();
  libbpf_messages().clear();
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "moontrace");
  obj_ = bpf_object__open_mem(object.data(), object.size(), &opts);
  if (!obj_)
    throw Error("cannot open the compiled BPF object: " + libbpf_messages());
  object_ = object;
}

BpfProgram::~BpfProgram() {
  for (auto *link : links_)
    bpf_link__destroy(link);
  bpf_object__close(helper_);
  bpf_object__close(obj_);
}

const struct btf *BpfProgram::btf() const {
  return bpf_object__btf(obj_);
}

size_t BpfProgram::program_count() const {
  size_t n = 0;
  for (struct bpf_object *obj : {obj_, helper_}) {
    struct bpf_program *prog;
    if (obj)
      bpf_object__for_each_program(prog, obj) {
        n += bpf_program__autoload(prog);
      }
  }
  return n;
}

struct bpf_program *BpfProgram::loaded_program(const std::string &name) const {
  for (struct bpf_object *obj : {obj_, helper_})
    if (struct bpf_program *prog =
            obj ? bpf_object__find_program_by_name(obj, name.c_str()) : nullptr;
        prog && bpf_program__fd(prog) >= 0)
      return prog;
  return nullptr;
}

namespace {

// Whether OBJ's programs (opened, not loaded) are worth verifying in two
// halves at once, each its own object: enough to verify, two CPUs to run
// them, and no USDT probe.
bool worth_loading_in_halves(struct bpf_object *obj) {
  size_t total = 0;
  struct bpf_program *prog;
  bpf_object__for_each_program(prog, obj) {
    // libbpf numbers a USDT probe's specs in maps per object: two objects
    // would number theirs over each other in the shared maps.
    if (std::string_view(bpf_program__section_name(prog)).starts_with("usdt"))
      return false;
    if (bpf_program__autoload(prog))
      total += verification_weight(prog);
  }
  // On one CPU (taskset) the halves would take turns, and the second
  // object's own start would be lost time.
  cpu_set_t cpus;
  return total >= kWeightWorthSplitting && sched_getaffinity(0, sizeof(cpus), &cpus) == 0 &&
         CPU_COUNT(&cpus) >= 2;
}

}  // namespace

bool BpfProgram::split_for_parallel_load() {
  if (!worth_loading_in_halves(obj_))
    return false;
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "moontrace");
  struct bpf_object *helper = bpf_object__open_mem(object_.data(), object_.size(), &opts);
  if (!helper)
    return false;
  if (!create_shared_maps(obj_, {obj_, helper})) {
    bpf_object__close(helper);
    return false;
  }
  helper_ = helper;
  std::vector<std::pair<size_t, struct bpf_program *>> by_weight;
  struct bpf_program *prog;
  bpf_object__for_each_program(prog, obj_) {
    if (bpf_program__autoload(prog))
      by_weight.emplace_back(verification_weight(prog), prog);
  }
  // The heaviest first, each to the half with less to verify so far.
  std::sort(by_weight.begin(), by_weight.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  std::set<std::string> helpers;
  size_t mine = 0, theirs = 0;
  for (auto [weight, p] : by_weight)
    if (mine <= theirs) {
      mine += weight;
    } else {
      theirs += weight;
      helpers.insert(bpf_program__name(p));
      bpf_program__set_autoload(p, false);
    }
  bpf_object__for_each_program(prog, helper_) {
    bpf_program__set_autoload(prog, helpers.count(bpf_program__name(prog)) > 0);
  }
  return true;
}

std::string BpfProgram::how_loaded() const {
  std::string how = helper_ ? ", verified in two halves at once" : "";
  if (maps_made_ahead_of_)
    how += "; maps made ahead: " + std::to_string(maps_taken_ahead_) + " of " +
           std::to_string(maps_made_ahead_of_);
  if (kernel_btf_ahead_.parsed)
    how += "; kernel BTF parsed ahead, taken by " + std::to_string(kernel_btf_ahead_.taken) +
           (kernel_btf_ahead_.taken == 1 ? " load" : " loads") + ", " +
           std::to_string(kernel_btf_ahead_.found_ahead) + " names found ahead";
  return how;
}

std::vector<char> BpfProgram::pack_params(const std::vector<Param> &params) const {
  std::vector<char> out;
  if (generated_.params_struct.empty())
    return out;
  const struct btf *b = btf();
  int id = btf__find_by_name_kind(b, generated_.params_struct.c_str(), BTF_KIND_STRUCT);
  if (id < 0)
    return out;
  const struct btf_type *t = btf__type_by_id(b, id);
  out.resize(t->size);
  const struct btf_member *m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); i++) {
    std::string name = btf__name_by_offset(b, m[i].name_off);
    size_t offset = btf_member_bit_offset(t, i) / 8;
    for (const auto &p : params) {
      if (p.name != name)
        continue;
      const ParamValue &v = p.value;
      if (p.type == ParamType::String)
        std::memcpy(out.data() + offset, v.text.c_str(),
                    std::min<size_t>(v.text.size(), MT_PARAM_STRING_BYTES - 1));
      else if (p.type == ParamType::Bool)
        out[offset] = v.number != 0;
      else
        std::memcpy(out.data() + offset, &v.number, 8);
    }
  }
  return out;
}

void BpfProgram::check_tracing_only() const {
  const char *remedy = " (run with --unsafe to allow it)";
  struct bpf_map *map;
  bpf_object__for_each_map(map, obj_) {
    std::string name = bpf_map__name(map);
    // Pinning writes under /sys/fs/bpf, or shares a map pinned there.
    if (const char *pin = bpf_map__pin_path(map))
      throw Error("the script's C pins the map " + name + " at " + pin +
                  "; maps may not be pinned" + remedy);
    switch (bpf_map__type(map)) {
      case BPF_MAP_TYPE_HASH:
      case BPF_MAP_TYPE_ARRAY:
      case BPF_MAP_TYPE_PERCPU_HASH:
      case BPF_MAP_TYPE_PERCPU_ARRAY:
      case BPF_MAP_TYPE_LRU_HASH:
      case BPF_MAP_TYPE_LRU_PERCPU_HASH:
      case BPF_MAP_TYPE_ARRAY_OF_MAPS:
      case BPF_MAP_TYPE_HASH_OF_MAPS:
      case BPF_MAP_TYPE_RINGBUF:
      case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
      case BPF_MAP_TYPE_STACK_TRACE:
      case BPF_MAP_TYPE_PROG_ARRAY:
      case BPF_MAP_TYPE_QUEUE:
      case BPF_MAP_TYPE_STACK:
      case BPF_MAP_TYPE_TASK_STORAGE:
      case BPF_MAP_TYPE_BLOOM_FILTER: break;
      default: {
        const char *kind = libbpf_bpf_map_type_str(bpf_map__type(map));
        throw Error("the script's C declares the map " + name + " of type " +
                    (kind ? kind : std::to_string(bpf_map__type(map))) +
                    ", which tracing does not use" + remedy);
      }
    }
  }
  struct bpf_program *prog;
  bpf_object__for_each_program(prog, obj_) {
    enum bpf_prog_type type = bpf_program__type(prog);
    enum bpf_attach_type attach = bpf_program__expected_attach_type(prog);
    bool tracing =
        type == BPF_PROG_TYPE_KPROBE || type == BPF_PROG_TYPE_TRACEPOINT ||
        type == BPF_PROG_TYPE_RAW_TRACEPOINT ||
        (type == BPF_PROG_TYPE_TRACING &&
         (attach == BPF_TRACE_FENTRY || attach == BPF_TRACE_FEXIT || attach == BPF_TRACE_RAW_TP));
    if (!tracing)
      throw Error(std::string("the program ") + bpf_program__name(prog) + " in section \"" +
                  bpf_program__section_name(prog) + "\" is not a tracing program" + remedy);
  }
}

void BpfProgram::load(const LoadSettings &settings) {
  if (!settings.unsafe)
    check_tracing_only();
  size_maps_for_run(obj_, settings.filter_targets, settings.filter_targets || settings.cgroup.id);
  // The rings made for the run; an empty array for one that runs nothing (check).
  if (struct bpf_map *rings = bpf_object__find_map_by_name(obj_, MT_NAME(MT_RINGS))) {
    if (settings.rings_fd < 0)
      bpf_map__set_max_entries(rings, libbpf_num_possible_cpus());
    else if (bpf_map__reuse_fd(rings, settings.rings_fd) != 0)
      throw Error(std::string("cannot use the per-CPU ring buffers: ") + std::strerror(errno));
  }
  for (const auto &name : generated_.follow_programs)
    if (struct bpf_program *follow = bpf_object__find_program_by_name(obj_, name.c_str());
        follow && !settings.filter_targets)
      bpf_program__set_autoload(follow, false);
  maps_taken_ahead_ = reuse_maps_made_ahead(obj_, settings.made_ahead);
  maps_made_ahead_of_ = settings.made_ahead.of;

  // Read-only settings: the target filter switch, the cgroup, when a
  // record wakes the reader, and the script's parameters.
  if (struct bpf_map *rodata = find_map(obj_, ".rodata")) {
    size_t size = 0;
    const void *initial = bpf_map__initial_value(rodata, &size);
    std::vector<char> data(static_cast<const char *>(initial),
                           static_cast<const char *>(initial) + size);
    auto set = [&](const char *name, const auto &value) {
      long at = variable_offset(btf(), ".rodata", name);
      if (at >= 0)
        std::memcpy(data.data() + at, &value, sizeof(value));
      else if (value)
        throw Error(std::string("internal error: the object has no ") + name);
    };
    set(MT_NAME(MT_FILTER_TARGETS), static_cast<uint32_t>(settings.filter_targets));
    set(MT_NAME(MT_WAKE_BYTES), settings.wake_bytes);
    set(MT_NAME(MT_CGROUP_ID), settings.cgroup.id);
    set(MT_NAME(MT_CGROUP_LEVEL), settings.cgroup.level);
    long param = variable_offset(btf(), ".rodata", "param");
    if (param >= 0 && !settings.params.empty())
      std::memcpy(data.data() + param, settings.params.data(), settings.params.size());
    bpf_map__set_initial_value(rodata, data.data(), data.size());
  }

  bool split = split_for_parallel_load();
  libbpf_messages().clear();
  lend_kernel_btf_ahead();
  int err = 0, helper_err = 0;
  std::string helper_log;
  auto load_helper = [&] {
    std::string mine = std::move(libbpf_messages());  // this thread's log may be the first half's
    libbpf_messages().clear();
    helper_err = bpf_object__load(helper_);
    helper_log = std::move(libbpf_messages());
    libbpf_messages() = std::move(mine);
  };
  if (split) {
    try {
      std::thread other(load_helper);
      err = bpf_object__load(obj_);
      other.join();
    } catch (const std::system_error &) {  // no thread: one after the other
      err = bpf_object__load(obj_);
      if (!err)
        load_helper();
    }
  } else {
    err = bpf_object__load(obj_);
  }
  kernel_btf_ahead_ = drop_kernel_btf_ahead();
  std::string log = libbpf_messages();
  if (!err && helper_err) {
    err = helper_err;
    log = helper_log;
  }
  if (!err)
    return;
  throw load_failure(err, log, generated_, decl_, settings.verbose);
}

void BpfProgram::attach(const LoadSettings &settings) {
  std::vector<std::string> helpers = generated_.naming_programs;
  if (settings.filter_targets)
    helpers.insert(helpers.end(), generated_.follow_programs.begin(),
                   generated_.follow_programs.end());
  for (const auto &name : helpers)
    if (auto *prog = loaded_program(name))
      if (auto *link = bpf_program__attach(prog))
        links_.push_back(link);
  // The probes record nothing until start_probes() (mt_run_stopped): the
  // first attached would otherwise record alone for the tens of
  // milliseconds the rest take, submits without the calls around them.
  set_stopped(true);
  std::set<std::string> attached;
  for (const auto &p : generated_.probes) {
    if (!attached.insert(p.attached_program).second)
      continue;  // one program runs every probe on its tracepoint
    struct bpf_program *prog = loaded_program(p.attached_program);
    if (!prog)
      throw Error("internal error: program " + p.attached_program + " is missing from the object");
    libbpf_messages().clear();
    struct bpf_link *link;
    const ProbeKindInfo &kind = probe_kind(p.name.kind);
    // A binary is handed to libbpf (and the kernel) as the regular file
    // the resolver checked, through its descriptor: a path swapped since
    // names no other file, nor a FIFO that would block.
    UniqueFd binary;
    std::string binary_path = p.name.target;
    if (kind.source == TargetSource::UsdtNotes || kind.user_memory) {
      if (!(binary = open_regular_file(p.name.target)))
        throw Error("cannot attach " + p.probe_name + ": " + p.name.target +
                        (errno == EINVAL ? " is no longer a regular file"
                                         : std::string(": ") + std::strerror(errno)),
                    decl_.probes[p.decl_id].where);
      binary_path = "/proc/self/fd/" + std::to_string(binary.get());
    }
    if (kind.source == TargetSource::UsdtNotes) {
      // libbpf reads the notes, sets the semaphores and describes the
      // arguments for mt_usdt_arg(), in the layout of libbpf 1.x before
      // 1.6, which packs the argument's kind with other fields.
      // The libbpf of this run (one soname serves every 1.x).
      if (libbpf_major_version() != 1 || libbpf_minor_version() >= 6)
        throw Error("cannot attach " + p.probe_name + ": libbpf " +
                        std::to_string(libbpf_major_version()) + "." +
                        std::to_string(libbpf_minor_version()) +
                        " describes USDT arguments in a layout this moontrace does not read",
                    decl_.probes[p.decl_id].where);
      link = bpf_program__attach_usdt(prog, -1, binary_path.c_str(), p.name.category.c_str(),
                                      p.name.symbol.c_str(), nullptr);
    } else if (kind.user_memory) {
      LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = kind.retval != ReturnValue::None,
                  .func_name = p.name.symbol.c_str());
      link = bpf_program__attach_uprobe_opts(prog, -1, binary_path.c_str(), 0, &opts);
    } else {
      link = bpf_program__attach(prog);
    }
    if (!link) {
      int err = errno;
      const ProbeDecl &d = decl_.probes[p.decl_id];
      std::string why = std::strerror(err);
      if (kind.needs == KernelNeeds::Kprobes) {
        KernelFacts kernel;
        if (std::string missing = kind_unavailable(p.name.kind, kernel); !missing.empty())
          why = missing;
      }
      throw Error("cannot attach " + p.probe_name + ": " + why, d.where, libbpf_messages());
    }
    links_.push_back(link);
  }
}

void BpfProgram::start_probes() {
  set_stopped(false);
}

void BpfProgram::set_stopped(bool stopped) {
  __u32 zero = 0, value = stopped;
  bpf_map_update_elem(map_fd(MT_NAME(MT_STOPPED)), &zero, &value, BPF_ANY);
}

void BpfProgram::stop_probes() {
  set_stopped(true);
  // Programs run inside RCU read sections: once a grace period is over,
  // those that started before the flag was set are done.
  syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

void BpfProgram::add_target(unsigned pid) {
  __u64 any_start = 0;  // no task's start time: its free does not remove it (mt_follow_free)
  bpf_map_update_elem(map_fd(MT_NAME(MT_TARGETS)), &pid, &any_start, BPF_ANY);
  // Programs cache their answers per CPU (mt_is_target): they must ask again.
  __u32 zero = 0;
  __u64 gen = 0;
  int gen_fd = map_fd(MT_NAME(MT_TARGETS_GEN));
  bpf_map_lookup_elem(gen_fd, &zero, &gen);
  gen++;
  bpf_map_update_elem(gen_fd, &zero, &gen, BPF_ANY);
}

int BpfProgram::program_fd(const std::string &name) const {
  struct bpf_program *prog = loaded_program(name);
  return prog ? bpf_program__fd(prog) : -1;
}

std::vector<uint64_t> BpfProgram::runs_skipped() const {
  std::vector<uint64_t> skipped(generated_.probes.size());
  std::set<std::string> counted;
  for (size_t i = 0; i < skipped.size(); i++) {
    const std::string &name = generated_.probes[i].attached_program;
    int fd = program_fd(name);
    struct bpf_prog_info info = {};
    __u32 size = sizeof(info);
    if (fd >= 0 && counted.insert(name).second && bpf_obj_get_info_by_fd(fd, &info, &size) == 0)
      skipped[i] = info.recursion_misses;
  }
  return skipped;
}

int BpfProgram::map_fd(const std::string &name) const {
  struct bpf_map *map = bpf_object__find_map_by_name(obj_, name.c_str());
  return map ? bpf_map__fd(map) : -1;
}

BpfProgram::MapInfo BpfProgram::map_info(const std::string &name) const {
  MapInfo info;
  if (struct bpf_map *map = bpf_object__find_map_by_name(obj_, name.c_str())) {
    info.fd = bpf_map__fd(map);
    info.key_type = static_cast<int>(bpf_map__btf_key_type_id(map));
    info.value_type = static_cast<int>(bpf_map__btf_value_type_id(map));
    info.type = bpf_map__type(map);
  }
  return info;
}

}  // namespace mt
