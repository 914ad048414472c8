/* What every generated program shares: the per-CPU ring buffers, the loss
 * counters, the target-process filter and the string helpers. */
#ifndef MT_RUNTIME_H
#define MT_RUNTIME_H
#include "mt_abi.h"
#include "mt_helpers.h"
#include "mt_loops.h"

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
} MT_RINGS SEC(".maps") MT_SHARED;

/* Records that could not be reserved, per probe. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MT_NUM_PROBES);
  __type(key, __u32);
  __type(value, __u64);
} MT_LOST SEC(".maps") MT_SHARED;

/* The flags of hash maps (not per-CPU ones): where the kernel lets tracing
 * programs use hash maps that allocate an entry when it is inserted (6.1,
 * bpf_mem_alloc), the generator sets BPF_F_NO_PREALLOC. A preallocated one
 * takes twice as long to create at the sizes used here (1.7 ms at 65,536
 * entries), and holds its memory whether it is used or not. */
#ifndef MT_HASH_FLAGS
#define MT_HASH_FLAGS 0
#endif

/* Processes being traced (-p/-c), followed into their children: each
 * task's start time, 0 for those the user space named. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __uint(map_flags, MT_HASH_FLAGS);
  __type(key, __u32);
  __type(value, __u64);
} MT_TARGETS SEC(".maps") MT_SHARED;

MT_SHARED const volatile __u32 MT_FILTER_TARGETS = 0;
/* --cgroup: only tasks in this cgroup's subtree are traced. */
MT_SHARED const volatile __u64 MT_CGROUP_ID = 0;
MT_SHARED const volatile __u32 MT_CGROUP_LEVEL = 0;
/* Bytes a ring may hold before a record wakes the reader: an eighth of it,
 * set at load. */
MT_SHARED const volatile __u64 MT_WAKE_BYTES = 1 << 19;

/* Set by the user space when the run stops, before it takes what the
 * rings hold: a probe that runs after records and counts nothing, so that
 * what the script sums in maps is what the trace holds. An array, whose
 * lookup the kernel inlines. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} MT_STOPPED SEC(".maps") MT_SHARED;
static __always_inline bool mt_run_stopped(void) {
  __u32 zero = 0, *stopped = bpf_map_lookup_elem(&mt_stopped, &zero);
  return stopped && *stopped;
}

/* Bumped after each process mt_targets gains or loses (mt_follow_fork,
 * mt_follow_free, the user space), so that the answers cached below are
 * asked again. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} MT_TARGETS_GEN SEC(".maps") MT_SHARED;

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
} mt_target_cache SEC(".maps") MT_SHARED;

/* PID_TGID: bpf_get_current_pid_tgid()'s, when -p/-c filter the targets
 * (else unused). A probe reads it once for this and for its pid, tid and
 * record: a helper call each made uring's NOP storm 5-8% slower (issue 13). */
static __always_inline bool mt_is_target_task(__u64 pid_tgid) {
  if (mt_cgroup_id && bpf_get_current_ancestor_cgroup_id(mt_cgroup_level) != mt_cgroup_id)
    return false;
  if (!mt_filter_targets)
    return true;
  __u32 zero = 0;
  __u64 tgid = pid_tgid >> 32;
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
static __always_inline bool mt_is_target(void) {
  return mt_is_target_task(bpf_get_current_pid_tgid());
}

/* After adding to mt_targets: cached answers are stale. */
static __always_inline void mt_targets_changed(void) {
  __u32 zero = 0;
  __u64 *gen = bpf_map_lookup_elem(&mt_targets_gen, &zero);
  if (gen)
    __sync_fetch_and_add(gen, 1);
}

/* Records are staged per CPU and handed to the CPU's ring in batches: a
 * reservation in the ring takes a lock and writes lines the reader shares,
 * which a batch pays once for many records. Each record starts on 8 bytes;
 * the reader tells records apart by their probe's record size. Stage 1
 * takes a record of a program that interrupted one writing to stage 0 (an
 * interrupt on the same CPU), and hands it on at once. The reader flushes
 * every CPU's stage before it reads the rings (mt_flush_stage, run on each
 * CPU), so a record waits there no longer than a record waits in a ring. */
#define MT_STAGE_BYTES 16384
struct mt_stage {
  __u32 len;  /* bytes staged */
  __u32 busy; /* a program is writing here: 1 in stage 0, 2 in stage 1 */
  __u8 data[MT_STAGE_BYTES];
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 2);
  __type(key, __u32);
  __type(value, struct mt_stage);
} mt_stages SEC(".maps") MT_SHARED;

/* Per CPU, the time its stage 0 took its oldest record still staged, 0
 * when it holds none: the reader, which maps this array, needs a CPU to
 * flush only when it has held records for long (an idle CPU), not one
 * busy enough to flush by itself. A line each, so that CPUs do not write
 * the same line. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1); /* one per CPU, set at load */
  __uint(map_flags, 1024 /* BPF_F_MMAPABLE */);
  __type(key, __u32);
  __type(value, struct mt_staged_since);
} MT_STAGED SEC(".maps") MT_SHARED;

/* Keeps the compiler from moving memory accesses across it: a program
 * that interrupts this one on the same CPU must see `busy` set before the
 * record is written, and the record whole before `len` grows. */
#define mt_barrier() asm volatile("" ::: "memory")

/* Where the kernel gives tracing programs private stacks (6.13, x86-64;
 * MT_GLOBAL_FLUSH), the staging below is done in global functions, which
 * the verifier walks once per program instead of once per path that
 * reaches a record: uring's programs take 19,700 instructions to verify
 * instead of 23,400 with only the flush a global function. Before that,
 * their frames would count against the caller's 512 bytes of stack, and
 * refuse probes whose keys Clang accepts (load_failure.cpp): they are
 * inlined. Their pointers may be null to the verifier. */
#if MT_GLOBAL_FLUSH
#define MT_STAGING MT_SHARED __attribute__((noinline)) int
#else
#define MT_STAGING static __always_inline int
#endif

/* Hands what is staged to this CPU's ring: 0 when the ring is full (it
 * stays staged, to go with the next flush). Waking the reader for every
 * batch costs the traced program more than the batch: it is woken only
 * once the ring is an eighth full; otherwise it finds the records when it
 * next polls (every few milliseconds). */
MT_STAGING mt_flush(struct mt_stage *st, __u32 level) {
  if (!st)
    return 0;
  __u32 len = st->len;
  if (!len)
    return 1;
  if (len > MT_STAGE_BYTES)
    return 0;
  __u32 cpu = bpf_get_smp_processor_id();
  void *ring = bpf_map_lookup_elem(&mt_rings, &cpu);
  if (!ring)
    return 0;
  __u64 wake = bpf_ringbuf_query(ring, 0 /* BPF_RB_AVAIL_DATA */) > mt_wake_bytes
                   ? 2 /* BPF_RB_FORCE_WAKEUP */
                   : 1 /* BPF_RB_NO_WAKEUP */;
  if (bpf_ringbuf_output(ring, st->data, len, wake))
    return 0;
  st->len = 0;
  if (level == 0) {
    /* Nothing staged any more, unless stage 1 kept what it could not hand
     * over (mt_stage_commit): the reader is still to come for that. */
    __u32 one = 1;
    struct mt_stage *up = bpf_map_lookup_elem(&mt_stages, &one);
    struct mt_staged_since *since = bpf_map_lookup_elem(&mt_staged, &cpu);
    mt_barrier();
    if (since && !(up && up->len))
      since->ns = 0;
  }
  return 1;
}

/* This CPU now holds staged records: the reader comes for them within a
 * millisecond (of the first, if it already held some). */
static __always_inline void mt_mark_staged(void) {
  __u32 cpu = bpf_get_smp_processor_id();
  struct mt_staged_since *since = bpf_map_lookup_elem(&mt_staged, &cpu);
  if (since && !since->ns)
    since->ns = bpf_ktime_get_ns();
}

/* Takes stage `st` (at `level`, 0 or 1) for a record of `room` bytes: marks
 * it busy and hands what it holds to the ring if the record would not fit.
 * Where the record goes in its data, or -1 when there is no room or no
 * stage (null: both are busy), counted as lost for `probe` (unless it is
 * MT_UNCOUNTED), the stage left free. */
#define MT_UNCOUNTED 0xffffffffu
MT_STAGING mt_stage_claim(struct mt_stage *st, __u32 level, __u32 probe, __u32 room) {
  if (st) {
    st->busy = level + 1;
    mt_barrier();
    if (st->len <= MT_STAGE_BYTES - room || mt_flush(st, level)) {
      __u32 at = st->len;
      if (!at && level == 0)
        mt_mark_staged();
      return at;
    }
    mt_barrier();
    st->busy = 0;
  }
  __u64 *lost = bpf_map_lookup_elem(&mt_lost, &probe);
  if (lost)
    *lost += 1;
  return -1;
}

/* Room for a record of `size` bytes on this CPU, NULL (counted as lost)
 * when there is none; mt_submit(*stage, size) hands it on. Stage 1 takes
 * the record of a program that interrupted one writing to stage 0. */
static __always_inline void *mt_reserve(__u32 probe, __u32 size, struct mt_stage **stage) {
  __u32 level = 0, room = (size + 7) & ~7u;
  struct mt_stage *st = bpf_map_lookup_elem(&mt_stages, &level);
  if (st && st->busy) {
    level = 1;
    st = bpf_map_lookup_elem(&mt_stages, &level);
    if (st && st->busy)
      st = NULL; /* interrupted twice over */
  }
  int at = mt_stage_claim(st, level, probe, room);
  if (!st || at < 0 || at > MT_STAGE_BYTES - room)
    return NULL;
  *stage = st;
  return st->data + at;
}

/* Adds the record of `room` bytes just written to the stage and frees it.
 * Half full, or a record of an interrupting program: on to the ring. What
 * stage 1 could not hand over (its ring was full) the reader comes for, as
 * for stage 0's. */
MT_STAGING mt_stage_commit(struct mt_stage *st, __u32 room) {
  if (!st)
    return 0;
  mt_barrier();
  st->len += room;
  if ((st->len >= MT_STAGE_BYTES / 2 || st->busy == 2) && !mt_flush(st, st->busy - 1) &&
      st->busy == 2)
    mt_mark_staged();
  mt_barrier();
  st->busy = 0;
  return 0;
}
static __always_inline void mt_submit(struct mt_stage *st, __u32 size) {
  mt_stage_commit(st, (size + 7) & ~7u);
}

/* Run by the reader on each CPU in turn (BPF_PROG_TEST_RUN): 1 when the
 * CPU's stages are empty now, 0 when a program on it was writing there or
 * its ring is full. On the reader's own CPU it runs with interrupts on: it
 * marks the stage busy as a writer does, so that a program run in an
 * interrupt meanwhile takes the other stage instead of adding a record
 * that the hand-over would then drop (or hand over twice). */
static __always_inline int mt_flush_level(__u32 level) {
  struct mt_stage *st = bpf_map_lookup_elem(&mt_stages, &level);
  if (!st)
    return 1;
  if (st->busy)
    return 0;
  st->busy = level + 1;
  mt_barrier();
  int flushed = mt_flush(st, level);
  mt_barrier();
  st->busy = 0;
  return flushed;
}
#if !defined(MT_PART) || MT_PART == 1 /* one part has it */
SEC("raw_tp/mt_flush")
int MT_FLUSH_STAGE(void *ctx) {
  return mt_flush_level(0) & mt_flush_level(1);
}
#endif

typedef __u64 MT_CGROUP_PATH_TYPE;

/* Copies a kernel string of at most sizeof(dst) bytes. */
#define mt_read_str(dst, src) bpf_probe_read_kernel_str(&(dst), sizeof(dst), (src))
#define mt_read_user_str(dst, src) bpf_probe_read_user_str(&(dst), sizeof(dst), (src))

/* A __data_loc field: offset in the low 16 bits, length in the high 16. */
#define mt_data_loc(ctx, loc) ((const char *)(ctx) + ((loc)&0xffff))

static __always_inline bool mt_streq(const char *a, const char *b, __u32 n) {
  for (__u32 i = 0; i < n; i++) {
    if (a[i] != b[i])
      return false;
    if (!a[i])
      return true;
  }
  return true;
}

MT_SHARED char LICENSE[] SEC("license") = "GPL";
#endif
