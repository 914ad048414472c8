/* Under -p/-c, the flows begun by traced events, so that their steps and
 * ends are drawn wherever they run: a block request a traced process
 * issued completes in an interrupt or a kworker. A direct-mapped table by
 * the flow id's hash: marking costs an atomic swap in an array, not a
 * hash update, which matters on a path that begins a flow per request. A
 * begin that finds its slot held by another flow takes it over, and counts
 * it (MT_FLOW_MARKS_TAKEN): that flow's later points outside the traced
 * processes, if any, are no longer drawn. */
#ifndef MT_FLOW_MARKS_H
#define MT_FLOW_MARKS_H
#include "mt_abi.h"
#include "mt_runtime.h"

#ifdef MT_FLOWS
#define MT_FLOW_MARK_SLOTS 65536

/* A slot holds the mark of the open flow it was taken for, 0 when free:
 * one word, swapped atomically, as begins and ends run on every CPU. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MT_FLOW_MARK_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
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
static __always_inline __u64 *mt_flow_slot(__u64 id) {
  __u32 low = (__u32)id;
  asm volatile("%0 -= 0" : "+w"(low));
  __u32 slot = (low * 0x9e3779b1U) >> 16 & (MT_FLOW_MARK_SLOTS - 1);
  return bpf_map_lookup_elem(&MT_FLOW_MARKS, &slot);
}

/* A traced event began flow `id` (id 0 is marked as ~0). */
static __always_inline void mt_flow_begun(__u64 id) {
  __u64 *m = mt_flow_slot(id);
  __u64 mark = id ? id : ~0ULL;
  if (!m)
    return;
  __u64 old = __sync_lock_test_and_set(m, mark);
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
  __u64 *m = mt_flow_slot(id);
  __u64 mark = id ? id : ~0ULL;
  if (!m || *m != mark)
    return false;
  if (end)
    __sync_val_compare_and_swap(m, mark, 0);
  return true;
}
#endif
#endif
