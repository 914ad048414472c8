/* Under -p/-c, the flows begun by traced events, so that their steps and
 * ends are drawn wherever they run: a block request a traced process
 * issued completes in an interrupt or a kworker. A table of buckets of
 * marks by the flow id's hash: marking costs an atomic exchange in an
 * array, not a hash update, which matters on a path that begins a flow per
 * request. Eight marks a bucket (a cache line): with 4,096 requests in
 * flight at once, a direct-mapped table's slot was held by another for 9%
 * of them, and with ids spread at random, buckets of four would overflow
 * in about one run of ten enters of 4,096 in two; of eight, in one of
 * thousands. A begin that finds all eight held by other flows takes over
 * the first, and counts it (MT_FLOW_MARKS_TAKEN): that flow's later
 * points outside the traced processes, if any, are no longer drawn. */
#ifndef MT_FLOW_MARKS_H
#define MT_FLOW_MARKS_H
#include "mt_abi.h"
#include "mt_runtime.h"

#ifdef MT_FLOWS
#define MT_FLOW_MARK_BUCKETS 8192
#define MT_FLOW_MARK_WAYS 8

/* A mark is that of the open flow it was taken for, 0 when free: one
 * word, changed atomically, as begins and ends run on every CPU. */
struct mt_flow_bucket {
  __u64 mark[MT_FLOW_MARK_WAYS];
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MT_FLOW_MARK_BUCKETS);
  __type(key, __u32);
  __type(value, struct mt_flow_bucket);
} MT_FLOW_MARKS SEC(".maps") MT_SHARED;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} MT_FLOW_MARKS_TAKEN SEC(".maps") MT_SHARED;

/* By the id's low 32 bits, made a number as mt_addr32 does: a flow id
 * may be a typed pointer (a tp_btf program's struct request), on which
 * the verifier refuses arithmetic, though not stores and compares. */
static __always_inline struct mt_flow_bucket *mt_flow_bucket(__u64 id) {
  __u32 low = (__u32)id;
  asm volatile("%0 -= 0" : "+w"(low));
  __u32 bucket = (low * 0x9e3779b1U) >> 19 & (MT_FLOW_MARK_BUCKETS - 1);
  return bpf_map_lookup_elem(&MT_FLOW_MARKS, &bucket);
}

/* A traced event began flow `id` (id 0 is marked as ~0). */
static __always_inline void mt_flow_begun(__u64 id) {
  struct mt_flow_bucket *b = mt_flow_bucket(id);
  __u64 mark = id ? id : ~0ULL;
  if (!b)
    return;
  /* Already marked (a flow that never ended, its id now begun again):
   * not a second copy, which its end would leave behind. */
#pragma unroll
  for (int i = 0; i < MT_FLOW_MARK_WAYS; i++)
    if (b->mark[i] == mark)
      return;
#pragma unroll
  for (int i = 0; i < MT_FLOW_MARK_WAYS; i++) {
    __u64 old = __sync_val_compare_and_swap(&b->mark[i], 0, mark);
    if (!old || old == mark)
      return;
  }
  __u64 old = __sync_lock_test_and_set(&b->mark[0], mark);
  if (old && old != mark) {
    __u32 zero = 0;
    __u64 *taken = bpf_map_lookup_elem(&MT_FLOW_MARKS_TAKEN, &zero);
    if (taken)
      *taken += 1;
  }
}

/* Whether flow `id` was begun by a traced event and is still open; an end
 * closes it. */
static __always_inline bool mt_flow_followed(__u64 id, bool end) {
  struct mt_flow_bucket *b = mt_flow_bucket(id);
  __u64 mark = id ? id : ~0ULL;
  if (!b)
    return false;
#pragma unroll
  for (int i = 0; i < MT_FLOW_MARK_WAYS; i++)
    if (b->mark[i] == mark) {
      if (end)
        __sync_val_compare_and_swap(&b->mark[i], mark, 0);
      return true;
    }
  return false;
}
#endif
#endif
