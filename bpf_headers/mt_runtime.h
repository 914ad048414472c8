/* What every generated program shares: the per-CPU ring buffers, the loss
 * counters, the target-process filter and the string helpers. */
#ifndef MT_RUNTIME_H
#define MT_RUNTIME_H
#include "mt_helpers.h"

#ifndef MT_NUM_PROBES
#define MT_NUM_PROBES 1
#endif

/* One ring buffer per CPU: the outer array is sized to the CPU count and
 * filled with ring buffers by user space before load. */
struct mt_ring_inner {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  __array(values, struct mt_ring_inner);
} mt_rings SEC(".maps");

/* Records that could not be reserved, per probe. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MT_NUM_PROBES);
  __type(key, __u32);
  __type(value, __u64);
} mt_lost SEC(".maps");

/* Processes being traced (-p/-c), followed into their children. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32);
  __type(value, __u8);
} mt_targets SEC(".maps");

const volatile __u32 mt_filter_targets = 0;
/* Bytes a ring may hold before a record wakes the reader: an eighth of it,
 * set at load. */
const volatile __u64 mt_wake_bytes = 1 << 19;

/* Bumped after each process mt_targets gains (by mt_follow_fork and by
 * user space), so that the answers cached below are asked again. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} mt_targets_gen SEC(".maps");

/* Per CPU, the last answer: tgid << 32 | generation (31 bits) << 1 |
 * answer, in one word so that a program nested in another (an interrupt)
 * never reads half an update. Most events in a row come from one process,
 * and the kernel inlines these array lookups, where the hash lookup costs
 * about as much as a clock read on every event. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} mt_target_cache SEC(".maps");

static __always_inline bool mt_is_target(void) {
  if (!mt_filter_targets)
    return true;
  __u32 zero = 0;
  __u64 tgid = bpf_get_current_pid_tgid() >> 32;
  __u64 *gen = bpf_map_lookup_elem(&mt_targets_gen, &zero);
  __u64 *cached = bpf_map_lookup_elem(&mt_target_cache, &zero);
  __u64 key = gen ? tgid << 32 | (*gen & 0x7fffffff) << 1 : 0;
  if (cached && gen && (*cached & ~1ULL) == key)
    return *cached & 1;
  __u32 t = tgid;
  bool found = bpf_map_lookup_elem(&mt_targets, &t) != NULL;
  if (cached && gen)
    *cached = key | found;
  return found;
}

/* After adding to mt_targets: cached answers are stale. */
static __always_inline void mt_targets_changed(void) {
  __u32 zero = 0;
  __u64 *gen = bpf_map_lookup_elem(&mt_targets_gen, &zero);
  if (gen)
    __sync_fetch_and_add(gen, 1);
}

/* A record of `size` bytes in this CPU's ring, NULL (counted as lost) when
 * it is full. *submit_flags says how to submit it: waking the reader for
 * every record costs the traced program far more than the record itself,
 * so it is woken only once the ring is an eighth full; otherwise it finds
 * the records when it next polls (every few milliseconds). */
static __always_inline void *mt_reserve(__u32 probe, __u64 size, __u64 *submit_flags) {
  __u32 cpu = bpf_get_smp_processor_id();
  void *ring = bpf_map_lookup_elem(&mt_rings, &cpu);
  void *rec = ring ? bpf_ringbuf_reserve(ring, size, 0) : NULL;
  if (!rec) {
    __u64 *lost = bpf_map_lookup_elem(&mt_lost, &probe);
    if (lost)
      *lost += 1;
    return NULL;
  }
  *submit_flags = bpf_ringbuf_query(ring, 0 /* BPF_RB_AVAIL_DATA */) > mt_wake_bytes
                      ? 2 /* BPF_RB_FORCE_WAKEUP */
                      : 1 /* BPF_RB_NO_WAKEUP */;
  return rec;
}

/* Copies a kernel string of at most sizeof(dst) bytes. */
#define mt_read_str(dst, src) bpf_probe_read_kernel_str(&(dst), sizeof(dst), (src))
#define mt_read_user_str(dst, src) bpf_probe_read_user_str(&(dst), sizeof(dst), (src))

/* A __data_loc field: offset in the low 16 bits, length in the high 16. */
#define mt_data_loc(ctx, loc) ((const char *)(ctx) + ((loc) & 0xffff))

static __always_inline bool mt_streq(const char *a, const char *b, __u32 n) {
  for (__u32 i = 0; i < n; i++) {
    if (a[i] != b[i])
      return false;
    if (!a[i])
      return true;
  }
  return true;
}

char LICENSE[] SEC("license") = "GPL";
#endif
