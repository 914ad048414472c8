/* The contract between the BPF side (these headers and the generated C)
 * and moontrace itself (codegen/, run/, trace/, app/): every name, slot,
 * layout and size both sides use, written once. Plain C that Clang reads
 * for BPF and the engine's C++ compiler reads too. */
#ifndef MT_ABI_H
#define MT_ABI_H
#ifdef __bpf__
#include "mt_types.h"
#else
#include <linux/types.h>
#endif

/* Maps, programs and load-time variables both sides name, as C
 * identifiers; MT_NAME() spells one as the string libbpf looks up. */
#define MT_NAME_TEXT(x) #x
#define MT_NAME(x) MT_NAME_TEXT(x)
#define MT_RINGS mt_rings                       /* per-CPU ring buffers, filled by the reader */
#define MT_LOST mt_lost                         /* records lost, per probe */
#define MT_TARGETS mt_targets                   /* -p/-c processes, followed into children */
#define MT_TARGETS_GEN mt_targets_gen           /* bumped when MT_TARGETS gains one */
#define MT_STOPPED mt_stopped                   /* set at the stop: probes do nothing after */
#define MT_STAGED mt_staged                     /* struct mt_staged_since per CPU, mmapped */
#define MT_FILTER_TARGETS mt_filter_targets     /* .rodata: 1 under -p/-c */
#define MT_WAKE_BYTES mt_wake_bytes             /* .rodata: ring bytes before a wakeup */
#define MT_CGROUP_ID mt_cgroup_id               /* .rodata: --cgroup's id, 0 for none */
#define MT_CGROUP_LEVEL mt_cgroup_level         /* .rodata: its level below the root */
#define MT_FLUSH_STAGE mt_flush_stage           /* run on a CPU to hand over its stage */
#define MT_AGG_FULL mt_agg_full                 /* per aggregation: keys refused, map full */
#define MT_LATENCY_COUNTS mt_latency_counts     /* per latency pair: starts, stops, missed */
#define MT_LATENCY_COUNTERS 5                   /* __u64 of MT_LATENCY_COUNTS per pair and CPU */
#define MT_FLOW_MARKS mt_flow_marks             /* -p/-c: flows begun in a traced process */
#define MT_FLOW_MARKS_TAKEN mt_flow_marks_taken /* marks taken over by another flow */
/* Marks the structs and unions the generator defines from the kernel's
 * BTF (kernel/kernel_btf.h), which the compiler's rewriter reads kernel
 * memory through (compiler/deref_rewriter.cpp). */
#define MT_KERNEL_RECORD "mt_kernel_record"
/* Maps named per declaration: codegen/c_generator.h. The struct types of
 * their values are named mt_..._val: the compiler loads through a pointer
 * to one directly, as it points into a map (compiler/deref_rewriter.cpp). */
#define MT_MAP_VALUE_TYPE_PREFIX "mt_"
#define MT_MAP_VALUE_TYPE_SUFFIX "_val"

/* Every record begins with the id of the probe that sent it (a __u32),
 * and starts on MT_RECORD_ALIGN bytes in a batch. Records with the id
 * just past the last probe's are thread names, when the program names
 * threads for a trace. */
#define MT_RECORD_ALIGN 8
struct mt_thread_name {
  __u32 __probe;
  __u32 pid;
  __u32 tid;
  char comm[16];
};

/* Per CPU, when its stage took its oldest record still staged (0: none);
 * a cache line each. */
struct mt_staged_since {
  __u64 ns;
  __u64 pad[7];
};

/* Stacks (kstack, ustack): a map of stacks per kind and depth, named
 * MT_STACK_MAP_PREFIX then 'k' (kernel) or 'u' (user) then the depth
 * ("mt_stack_k127"); a captured stack is a value of the type of that name
 * followed by "_t". A kernel stack's value is the map's id (negative: no
 * stack); a user stack's is the process id << 32 | the id, as user
 * addresses mean something only in their process. User stacks are kept as
 * build ids and file offsets (struct bpf_stack_build_id), so that a
 * program that has exited can still be symbolized. */
#define MT_STACK_MAP_PREFIX "mt_stack_"
#define MT_STACK_MAX_DEPTH 127 /* the kernel's perf_event_max_stack default */
#define MT_STACK_DEFAULT_DEPTH 127
/* Entries of a stack map: as many as about 16 MiB of kernel memory holds,
 * 4,096 to 65,536. A new stack whose hash finds its slot taken by another
 * is not kept (the capture shows "[no stack]"). */
#define MT_STACK_MAP_BYTES (16u << 20)
#define MT_STACK_MAP_MIN_ENTRIES 4096u
#define MT_STACK_MAP_MAX_ENTRIES 65536u
#define MT_STACK_BUILD_ID_FRAME_BYTES 32 /* sizeof(struct bpf_stack_build_id) */
/* Kernel stacks keep this many frames more than asked for (up to the
 * most): a raw tracepoint's or fentry's begins in the BPF program and the
 * code that ran it, which the engine leaves out. */
#define MT_STACK_KERNEL_EXTRA_FRAMES 4

/* cgroup_path: a cgroup id (bpf_get_current_cgroup_id()) of this type,
 * which the engine shows as the cgroup's path. */
#define MT_CGROUP_PATH_TYPE mt_cgroup_path_t

/* A string parameter's buffer in the params struct, its NUL included. */
#define MT_PARAM_STRING_BYTES 64

#endif
