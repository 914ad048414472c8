/* In-kernel state for scripts: their own maps (map_get/map_set/...),
 * aggregations in per-CPU hashes, and latency pairs. Pointer work lives in
 * these functions, outside the probe bodies the read rewriter edits. */
#ifndef MT_AGGREGATE_H
#define MT_AGGREGATE_H
#include "mt_abi.h"
#include "mt_helpers.h"

/* A script's map M, keyed and valued by the types it declared. */
#define map_ptr(m, k)                                                \
  ({                                                                 \
    __typeof__(*(m).key) __mk = (k);                                 \
    (__typeof__((m).value))bpf_map_lookup_elem((void *)&(m), &__mk); \
  })
#define map_has(m, k) (map_ptr(m, k) != NULL)
#define map_get(m, k)                           \
  ({                                            \
    __typeof__((m).value) __mp = map_ptr(m, k); \
    __mp ? *__mp : (__typeof__(*(m).value)){0}; \
  })
#define map_set(m, k, v)                                      \
  ({                                                          \
    __typeof__(*(m).key) __mk = (k);                          \
    __typeof__(*(m).value) __mv = (v);                        \
    bpf_map_update_elem((void *)&(m), &__mk, &__mv, BPF_ANY); \
  })
#define map_del(m, k)                         \
  ({                                          \
    __typeof__(*(m).key) __mk = (k);          \
    bpf_map_delete_elem((void *)&(m), &__mk); \
  })
#define map_add(m, k, d)                                  \
  ({                                                      \
    __typeof__(*(m).key) __mk = (k);                      \
    __typeof__(*(m).value) __md = (d);                    \
    mt_map_add((void *)&(m), &__mk, &__md, sizeof(__md)); \
  })
/* A struct key from its fields, in name order (or designated: .field = v). */
#define map_key(m, ...) ((__typeof__(*(m).key)){__VA_ARGS__})
/* A struct value from its fields, e.g. map_val(m, .count = 1). */
#define map_val(m, ...) ((__typeof__(*(m).value)){__VA_ARGS__})

/* Adds *delta to an integer value of 1, 2, 4 or 8 bytes, inserting it if
 * absent; returns 0, or -1 when the map is full. */
static __always_inline int mt_map_add(void *map, const void *key, const void *delta, __u32 size) {
  for (int attempt = 0; attempt < 2; attempt++) {
    void *v = bpf_map_lookup_elem(map, key);
    if (v) {
      if (size == 8)
        __sync_fetch_and_add((__u64 *)v, *(const __u64 *)delta);
      else if (size == 4)
        __sync_fetch_and_add((__u32 *)v, *(const __u32 *)delta);
      else if (size == 2)
        *(__u16 *)v += *(const __u16 *)delta;
      else
        *(__u8 *)v += *(const __u8 *)delta;
      return 0;
    }
    /* Fails when another CPU inserted the key meanwhile: add to theirs. */
    if (bpf_map_update_elem(map, key, delta, BPF_NOEXIST) == 0)
      return 0;
  }
  return -1;
}

/* Slot i holds [2^i, 2^(i+1)), slot 0 also 0; negatives go to slot 64.
 * No branch per bit (the compiler expands the count of leading zeros into
 * shifts and masks): each would double the paths the verifier walks
 * through the rest of the program, as every one leaves a different slot. */
static __always_inline __u32 mt_log2_slot(__s64 value) {
  if (value < 0)
    return 64;
  return 63 - __builtin_clzll((__u64)value | 1);
}

/* A log-linear slot, for quantiles: values below 8 have their own slot;
 * above, each power of two is split into 8 equal slots, so a slot spans at
 * most 1/8 of its values (stdlib quantiles.lua reads them back). */
static __always_inline __u32 mt_log_linear_slot(__u64 value) {
  if (value < 8)
    return value;
  __u32 e = mt_log2_slot(value);
  return (e - 2) * 8 + ((value >> (e - 3)) & 7);
}

#ifdef MT_NUM_AGGREGATIONS
struct mt_stats {
  __u64 count;
  __s64 sum, min, max;
};

/* Updates that found the aggregation's map full, per aggregation. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MT_NUM_AGGREGATIONS);
  __type(key, __u32);
  __type(value, __u64);
} MT_AGG_FULL SEC(".maps") MT_SHARED;

static __always_inline void mt_agg_dropped(__u32 agg) {
  __u64 *n = bpf_map_lookup_elem(&mt_agg_full, &agg);
  if (n)
    *n += 1;
}

/* Counts and histogram slots: a per-CPU counter, no atomics needed. */
static __always_inline void mt_agg_add(void *map, const void *key, __u64 delta, __u32 agg) {
  __u64 *v = bpf_map_lookup_elem(map, key);
  if (!v) {
    if (bpf_map_update_elem(map, key, &delta, BPF_NOEXIST) == 0)
      return;
    v = bpf_map_lookup_elem(map, key);
    if (!v) {
      mt_agg_dropped(agg);
      return;
    }
  }
  *v += delta;
}

/* sum, min, max, avg and stats share one per-CPU record. */
static __always_inline void mt_agg_stats(void *map, const void *key, __s64 value, __u32 agg) {
  struct mt_stats *s = bpf_map_lookup_elem(map, key);
  if (!s) {
    struct mt_stats first = {1, value, value, value};
    if (bpf_map_update_elem(map, key, &first, BPF_NOEXIST) == 0)
      return;
    s = bpf_map_lookup_elem(map, key);
    if (!s) {
      mt_agg_dropped(agg);
      return;
    }
  }
  /* Another CPU may have created the key: this CPU's record starts empty. */
  if (!s->count || value < s->min)
    s->min = value;
  if (!s->count || value > s->max)
    s->max = value;
  s->count += 1;
  s->sum += value;
}

/* Slot 0 is below min, 1..n the steps, n+1 at or above max. */
static __always_inline __u32 mt_linear_slot(__s64 value, __s64 min, __s64 max, __u64 step) {
  if (value < min)
    return 0;
  if (value >= max)
    return ((__u64)(max - min) + step - 1) / step + 1;
  return (__u64)(value - min) / step + 1;
}
#endif

/* Values in ns shown in a larger unit; unsigned division (BPF before v4
 * has no signed division). */
static __always_inline __s64 mt_scale(__s64 value, __u64 divisor) {
  return value < 0 ? -(__s64)((__u64)(-value) / divisor) : (__s64)((__u64)value / divisor);
}

#ifdef MT_NUM_LATENCIES
struct mt_latency_counts {
  __u64 starts;    /* new entries */
  __u64 restarts;  /* a start whose key was still pending: its time replaced */
  __u64 matched;   /* stops that found their start */
  __u64 unmatched; /* stops without a start (started before tracing, evicted) */
  __u64 dropped;   /* new starts the map or task storage refused to keep */
};
_Static_assert(sizeof(struct mt_latency_counts) == MT_LATENCY_COUNTERS * sizeof(__u64),
               "mt_abi.h counts the counters");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MT_NUM_LATENCIES);
  __type(key, __u32);
  __type(value, struct mt_latency_counts);
} MT_LATENCY_COUNTS SEC(".maps") MT_SHARED;

static __always_inline struct mt_latency_counts *mt_latency_counts_of(__u32 id) {
  return bpf_map_lookup_elem(&mt_latency_counts, &id);
}

/* Where a pair keeps its start: by `key` in an LRU hash map, or, for a
 * pair keyed by the thread alone (key 0, a constant where this inlines),
 * in the thread's task storage: found through the task, with no key to
 * hash and no LRU list to keep, and freed with the thread. */
static __always_inline __u64 *mt_latency_slot(void *map, const void *key, __u64 flags) {
  if (!key)
    return bpf_task_storage_get(map, bpf_get_current_task_btf(), 0, flags);
  return bpf_map_lookup_elem(map, key);
}

/* `start` is the pair's value struct, whose first member is the time (0:
 * no start pending). A key keeps its entry once stopped, and the next start
 * of the key writes it in place: an LRU map's update and delete cost far
 * more than lookups, and a thread or a request slot starts again soon.
 * `size` is a constant where these inline, so the copies are plain loads
 * and stores (a probe read costs a helper call). */
static __always_inline void mt_latency_start(void *map, const void *key, void *start, __u32 size,
                                             __u64 now, __u32 id) {
  *(__u64 *)start = now;
  struct mt_latency_counts *c = mt_latency_counts_of(id);
  __u64 *found = mt_latency_slot(map, key, BPF_LOCAL_STORAGE_GET_F_CREATE);
  bool restart = found && *found, kept = true;
  if (found)
    __builtin_memcpy(found, start, size);
  else /* task storage busy (a program it interrupted holds it) or out of memory */
    kept = key && bpf_map_update_elem(map, key, start, BPF_ANY) == 0;
  if (c) {
    if (restart)
      c->restarts += 1;
    else
      c->starts += 1;
    if (!kept)
      c->dropped += 1;
  }
}

/* Copies the matching start out and marks it stopped; false if there is
 * none. */
static __always_inline bool mt_latency_stop(void *map, const void *key, __u32 id, void *start,
                                            __u32 size, __u64 now, __u64 *latency) {
  struct mt_latency_counts *c = mt_latency_counts_of(id);
  __u64 *found = mt_latency_slot(map, key, 0);
  if (!found || !*found) {
    /* Stops run for every process (a pair begun in a target may end in an
     * interrupt or another task); one without a start is the target's own
     * unmatched stop only where it ran in a target. */
    if (c && mt_is_target())
      c->unmatched += 1;
    return false;
  }
  __builtin_memcpy(start, found, size);
  *found = 0;
  *latency = now - *(__u64 *)start;
  if (c)
    c->matched += 1;
  return true;
}
#endif
#endif
