/* Under -p/-c, the flows begun in a traced process, so that their steps
 * and ends are drawn wherever they run: a block request a traced process
 * issued completes in an interrupt or a kworker. A direct-mapped table by
 * the flow id's hash: marking costs an array store, not a hash update,
 * which matters on a path that begins a flow per request. A begin that
 * finds its slot held by another open flow takes it over, and counts it
 * (MT_FLOW_MARKS_TAKEN): that flow's later points outside the traced
 * processes are no longer drawn. */
#ifndef MT_FLOW_MARKS_H
#define MT_FLOW_MARKS_H
#include "mt_abi.h"
#include "mt_runtime.h"

#ifdef MT_FLOWS
#define MT_FLOW_MARK_SLOTS 65536

struct mt_flow_mark {
  __u64 id;
  __u64 held; /* 1 while the flow is open */
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MT_FLOW_MARK_SLOTS);
  __type(key, __u32);
  __type(value, struct mt_flow_mark);
} MT_FLOW_MARKS SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} MT_FLOW_MARKS_TAKEN SEC(".maps");

/* By the id's low 32 bits, made a number as mt_addr32 does: a flow id
 * may be a typed pointer (a tp_btf program's struct request), on which
 * the verifier refuses arithmetic, though not stores and compares. */
static __always_inline struct mt_flow_mark *mt_flow_slot(__u64 id) {
  __u32 low = (__u32)id;
  asm volatile("%0 -= 0" : "+w"(low));
  __u32 slot = (low * 0x9e3779b1U) >> 16 & (MT_FLOW_MARK_SLOTS - 1);
  return bpf_map_lookup_elem(&MT_FLOW_MARKS, &slot);
}

/* A traced process began flow `id`. */
static __always_inline void mt_flow_begun(__u64 id) {
  struct mt_flow_mark *m = mt_flow_slot(id);
  if (!m)
    return;
  if (m->held && m->id != id) {
    __u32 zero = 0;
    __u64 *taken = bpf_map_lookup_elem(&MT_FLOW_MARKS_TAKEN, &zero);
    if (taken)
      *taken += 1;
  }
  m->id = id;
  m->held = 1;
}

/* Whether flow `id` was begun in a traced process and is still open; an
 * end closes it. */
static __always_inline bool mt_flow_followed(__u64 id, bool end) {
  struct mt_flow_mark *m = mt_flow_slot(id);
  if (!m || !m->held || m->id != id)
    return false;
  if (end)
    m->held = 0;
  return true;
}
#endif
#endif
