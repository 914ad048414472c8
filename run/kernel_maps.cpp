// Reads, merges, clears and updates a loaded program's maps and aggregations via bpf().
#include "run/kernel_maps.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstring>

#include "bpf_headers/mt_abi.h"
#include "codegen/c_generator.h"
#include "common/error.h"
#include "run/bpf_loader.h"

namespace mt {

namespace {

size_t percpu_stride(size_t value_size) {
  return (value_size + 7) / 8 * 8;  // the kernel's per-CPU value alignment
}

// Every key of a map, as raw bytes.
std::vector<std::vector<char>> all_keys(int fd, size_t key_size) {
  std::vector<std::vector<char>> keys;
  std::vector<char> key(key_size), next(key_size);
  const void *previous = nullptr;
  while (bpf_map_get_next_key(fd, previous, next.data()) == 0) {
    keys.push_back(next);
    key = next;
    previous = key.data();
  }
  return keys;
}

// The merged per-CPU record of sum, min, max, avg and stats (struct mt_stats).
struct Stats {
  uint64_t count;
  int64_t sum, min, max;
};

bool less(const FieldValue &a, const FieldValue &b) {
  switch (a.kind) {
    case FieldKind::Signed: return a.i < b.i;
    case FieldKind::Float: return a.f < b.f;
    case FieldKind::String:
    case FieldKind::Stack:
    case FieldKind::Bytes: return a.s < b.s;
    default: return a.u < b.u;
  }
}

// What makes rows one: the key's bytes, but a stack's frames in place of its
// id, so that stacks cut to the same frames (kstack(3)) are one row.
std::string row_group(const RecordLayout &layout, const std::vector<FieldValue> &decoded,
                      const std::vector<char> &key) {
  std::string group(key.begin(), key.end());
  for (size_t i = 0; i < decoded.size(); i++)
    if (decoded[i].kind == FieldKind::Stack) {
      std::memset(group.data() + layout.fields[i].offset, 0, layout.fields[i].size);
      group += '\0' + decoded[i].s;
    }
  return group;
}

bool key_less(const std::vector<FieldValue> &a, const std::vector<FieldValue> &b) {
  for (size_t i = 0; i < a.size() && i < b.size(); i++) {
    if (less(a[i], b[i]))
      return true;
    if (less(b[i], a[i]))
      return false;
  }
  return a.size() < b.size();
}

}  // namespace

KernelMaps::KernelMaps(const BpfProgram &program, const Declaration &decl)
    : decl_(decl), cpus_(std::max(1, libbpf_num_possible_cpus())) {
  auto open = [&](const std::string &name, bool percpu) {
    Map m;
    BpfProgram::MapInfo info = program.map_info(name);
    m.fd = info.fd;
    m.percpu = percpu;
    m.task_storage = info.type == BPF_MAP_TYPE_TASK_STORAGE;
    if (m.fd >= 0) {
      m.key = layout_of_type(program.btf(), info.key_type);
      m.value = layout_of_type(program.btf(), info.value_type);
      // Histogram keys lead with their slot, which the layout leaves out.
      m.key.size = static_cast<uint32_t>(btf__resolve_size(program.btf(), info.key_type));
      m.value.size = static_cast<uint32_t>(btf__resolve_size(program.btf(), info.value_type));
    }
    return m;
  };
  for (const auto &m : decl.maps)
    maps_.push_back(open(m.name, m.kind == MapKind::PercpuHash || m.kind == MapKind::PercpuArray));
  for (const auto &a : decl.aggregations)
    aggregations_.push_back(open(aggregation_map_name(a.id), true));
  for (const auto &l : decl.latencies)
    latencies_.push_back(open(latency_map_name(l.id), false));
  agg_full_fd_ = program.map_fd(MT_NAME(MT_AGG_FULL));
  latency_counts_fd_ = program.map_fd(MT_NAME(MT_LATENCY_COUNTS));
  flow_marks_taken_fd_ = program.map_fd(MT_NAME(MT_FLOW_MARKS_TAKEN));
}

AggregationSnapshot KernelMaps::aggregation(int id) const {
  AggregationSnapshot snap;
  const AggregationDecl &decl = decl_.aggregations[id];
  snap.decl = &decl;
  const Map &m = aggregations_[id];
  if (m.fd < 0)
    return snap;
  bool histogram = is_histogram(decl.kind);
  bool counter = decl.kind == AggKind::Count || histogram;
  size_t stride = percpu_stride(m.value.size);
  std::vector<char> values(stride * cpus_);
  // Histogram rows gather their slots: group by the key without its slot.
  std::map<std::string, AggregationRow> rows;
  for (auto key : all_keys(m.fd, m.key.size)) {
    if (bpf_map_lookup_elem(m.fd, key.data(), values.data()) != 0)
      continue;  // deleted meanwhile
    uint32_t slot = 0;
    if (histogram) {
      std::memcpy(&slot, key.data(), 4);
      std::memset(key.data(), 0, 4);
    }
    std::vector<FieldValue> decoded = decode_fields(m.key, key.data(), key.size());
    auto [it, fresh] = rows.try_emplace(row_group(m.key, decoded, key));
    AggregationRow &row = it->second;
    if (fresh)
      row.key = std::move(decoded);
    for (int cpu = 0; cpu < cpus_; cpu++) {
      const char *v = values.data() + cpu * stride;
      if (counter) {
        uint64_t n;
        std::memcpy(&n, v, 8);
        row.count += n;
        if (histogram && n)
          row.slots[slot] += n;
        continue;
      }
      Stats s;
      std::memcpy(&s, v, sizeof(s));
      if (!s.count)
        continue;
      if (!row.count || s.min < row.min)
        row.min = s.min;
      if (!row.count || s.max > row.max)
        row.max = s.max;
      row.count += s.count;
      row.sum += s.sum;
    }
  }
  for (auto &[group, row] : rows)
    snap.rows.push_back(std::move(row));
  std::sort(
      snap.rows.begin(), snap.rows.end(),
      [](const AggregationRow &a, const AggregationRow &b) { return key_less(a.key, b.key); });
  if (agg_full_fd_ >= 0) {
    std::vector<uint64_t> dropped(cpus_);
    uint32_t index = id;
    if (bpf_map_lookup_elem(agg_full_fd_, &index, dropped.data()) == 0)
      for (auto n : dropped)
        snap.dropped += n;
  }
  return snap;
}

void KernelMaps::clear_aggregation(int id) {
  const Map &m = aggregations_[id];
  if (m.fd >= 0)
    for (const auto &key : all_keys(m.fd, m.key.size))
      bpf_map_delete_elem(m.fd, key.data());
}

MapSnapshot KernelMaps::map(int index) const {
  MapSnapshot snap;
  snap.decl = &decl_.maps[index];
  const Map &m = maps_[index];
  snap.key = m.key;
  snap.value = m.value;
  bool array = snap.decl->kind == MapKind::Array || snap.decl->kind == MapKind::PercpuArray;
  std::vector<char> value;
  for (const auto &key : all_keys(m.fd, m.key.size)) {
    if (!lookup(index, key, value))
      continue;
    // Arrays have every index: show the ones that were written.
    if (array && std::all_of(value.begin(), value.end(), [](char c) { return c == 0; }))
      continue;
    snap.entries.push_back({decode_fields(m.key, key.data(), key.size()),
                            decode_fields(m.value, value.data(), value.size())});
  }
  return snap;
}

void KernelMaps::clear_map(int index) {
  const Map &m = maps_[index];
  bool array =
      decl_.maps[index].kind == MapKind::Array || decl_.maps[index].kind == MapKind::PercpuArray;
  std::vector<char> zero(percpu_stride(m.value.size) * cpus_);
  for (const auto &key : all_keys(m.fd, m.key.size)) {
    if (array)
      bpf_map_update_elem(m.fd, key.data(), zero.data(), BPF_ANY);
    else
      bpf_map_delete_elem(m.fd, key.data());
  }
}

bool KernelMaps::lookup(int index, const std::vector<char> &key, std::vector<char> &value) const {
  const Map &m = maps_[index];
  value.assign(m.value.size, 0);
  if (!m.percpu)
    return bpf_map_lookup_elem(m.fd, key.data(), value.data()) == 0;
  size_t stride = percpu_stride(m.value.size);
  std::vector<char> all(stride * cpus_);
  if (bpf_map_lookup_elem(m.fd, key.data(), all.data()) != 0)
    return false;
  // Integers are summed over CPUs; anything else is CPU 0's.
  std::memcpy(value.data(), all.data(), m.value.size);
  for (const auto &f : m.value.fields) {
    if (f.kind != FieldKind::Signed && f.kind != FieldKind::Unsigned)
      continue;
    FieldValue total;
    total.kind = FieldKind::Unsigned;
    for (int cpu = 0; cpu < cpus_; cpu++) {
      FieldValue v = decode_fields({m.value.size, {f}}, all.data() + cpu * stride, stride)[0];
      total.u += f.kind == FieldKind::Signed ? static_cast<uint64_t>(v.i) : v.u;
    }
    encode_field(f, total, value.data());
  }
  return true;
}

void KernelMaps::update(int index, const std::vector<char> &key, const std::vector<char> &value) {
  const Map &m = maps_[index];
  int err;
  if (m.percpu) {
    // This CPU-less write lands on CPU 0; the others start from zero.
    std::vector<char> all(percpu_stride(m.value.size) * cpus_);
    std::memcpy(all.data(), value.data(), std::min(value.size(), all.size()));
    err = bpf_map_update_elem(m.fd, key.data(), all.data(), BPF_ANY);
  } else {
    err = bpf_map_update_elem(m.fd, key.data(), value.data(), BPF_ANY);
  }
  if (err)
    throw Error("map '" + decl_.maps[index].name + "': cannot set an entry: " +
                std::strerror(-err) + (err == -E2BIG ? " (map full: raise size=)" : ""));
}

void KernelMaps::remove(int index, const std::vector<char> &key) {
  bpf_map_delete_elem(maps_[index].fd, key.data());
}

LatencyCounts KernelMaps::latency(int id) const {
  LatencyCounts c;
  const Map &m = latencies_[id];
  if (latency_counts_fd_ < 0 || m.fd < 0)
    return c;
  std::vector<uint64_t> per_cpu(MT_LATENCY_COUNTERS * cpus_);
  uint32_t index = id;
  if (bpf_map_lookup_elem(latency_counts_fd_, &index, per_cpu.data()) == 0)
    for (int cpu = 0; cpu < cpus_; cpu++) {
      const uint64_t *counters = &per_cpu[cpu * MT_LATENCY_COUNTERS];
      c.starts += counters[0];
      c.restarts += counters[1];
      c.matched += counters[2];
      c.unmatched += counters[3];
      c.dropped += counters[4];
    }
  // Task storage is not iterated, and loses a start only with its thread.
  if (m.task_storage) {
    uint64_t gone = c.matched + c.dropped;
    c.pending = c.starts > gone ? c.starts - gone : 0;
    return c;
  }
  // A stopped start stays in the map, its time zeroed, for the key's next start.
  std::vector<char> value(m.value.size);
  for (const auto &key : all_keys(m.fd, m.key.size)) {
    uint64_t start_ns = 0;
    if (bpf_map_lookup_elem(m.fd, key.data(), value.data()) == 0 && value.size() >= 8)
      std::memcpy(&start_ns, value.data(), 8);
    c.pending += start_ns != 0;
  }
  return c;
}

uint64_t KernelMaps::flow_marks_taken() const {
  uint64_t taken = 0;
  std::vector<uint64_t> per_cpu(cpus_);
  uint32_t zero = 0;
  if (flow_marks_taken_fd_ >= 0 &&
      bpf_map_lookup_elem(flow_marks_taken_fd_, &zero, per_cpu.data()) == 0)
    for (auto n : per_cpu)
      taken += n;
  return taken;
}

}  // namespace mt
