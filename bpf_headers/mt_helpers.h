/* The BPF helpers generated programs use, declared by their stable ids. */
#ifndef MT_HELPERS_H
#define MT_HELPERS_H
#include "mt_types.h"

#define SEC(name) __attribute__((section(name), used))
/* What every program shares (maps, globals, mt_flush). A big script is
 * compiled in two parts at once, each with half its programs (MT_PART 1
 * and 2, app/compile_job.h), and linked: each part defines what
 * they share, and the linker keeps one. */
#ifdef MT_PART
#define MT_SHARED __attribute__((weak))
#else
#define MT_SHARED
#endif
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name
#define __array(name, val) typeof(val) *name[]
#define __always_inline inline __attribute__((always_inline))

enum {
  BPF_MAP_TYPE_HASH = 1,
  BPF_MAP_TYPE_ARRAY = 2,
  BPF_MAP_TYPE_PERCPU_HASH = 5,
  BPF_MAP_TYPE_PERCPU_ARRAY = 6,
  BPF_MAP_TYPE_STACK_TRACE = 7,
  BPF_MAP_TYPE_LRU_HASH = 9,
  BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
  BPF_MAP_TYPE_RINGBUF = 27,
  BPF_MAP_TYPE_TASK_STORAGE = 29,
};
enum { BPF_ANY = 0, BPF_NOEXIST = 1, BPF_EXIST = 2 };
enum { BPF_F_STACK_BUILD_ID = 1 << 5, BPF_F_USER_STACK = 1 << 8 };
enum { BPF_F_NO_PREALLOC = 1, BPF_LOCAL_STORAGE_GET_F_CREATE = 1 };

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
                                   __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static long (*bpf_probe_read)(void *dst, __u32 size, const void *src) = (void *)4;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u32 (*bpf_get_prandom_u32)(void) = (void *)7;
static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static __u64 (*bpf_get_current_uid_gid)(void) = (void *)15;
static long (*bpf_get_current_comm)(void *buf, __u32 size) = (void *)16;
static __u64 (*bpf_get_current_task)(void) = (void *)35;
static long (*bpf_get_stackid)(void *ctx, void *map, __u64 flags) = (void *)27;
struct task_struct;
static struct task_struct *(*bpf_get_current_task_btf)(void) = (void *)158;
static void *(*bpf_task_storage_get)(void *map, struct task_struct *task, void *value,
                                     __u64 flags) = (void *)156;
static __u64 (*bpf_get_current_cgroup_id)(void) = (void *)80;
static __u64 (*bpf_get_current_ancestor_cgroup_id)(int level) = (void *)123;
static long (*bpf_probe_read_user)(void *dst, __u32 size, const void *src) = (void *)112;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
static long (*bpf_probe_read_user_str)(void *dst, __u32 size, const void *src) = (void *)114;
static long (*bpf_probe_read_kernel_str)(void *dst, __u32 size, const void *src) = (void *)115;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size, __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;
static __u64 (*bpf_ringbuf_query)(void *ringbuf, __u64 flags) = (void *)134;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, __u64 size, __u64 flags) = (void *)130;

/* Reads through kernel (or user) pointers for probe kinds without direct
 * BTF access; the compiler rewrites `p->f`, `*p` and `p[i]` into these. */
#define __mt_read_into(dst, src) MT_PROBE_READ(&(dst), sizeof(dst), (const void *)(src))
#define __mt_rd(p, path)                          \
  ({                                              \
    __typeof_unqual__((p)->path) __mt_v;          \
    __builtin_memset(&__mt_v, 0, sizeof(__mt_v)); \
    __mt_read_into(__mt_v, &(p)->path);           \
    __mt_v;                                       \
  })
#define __mt_deref(p)                             \
  ({                                              \
    __typeof_unqual__(*(p)) __mt_v;               \
    __builtin_memset(&__mt_v, 0, sizeof(__mt_v)); \
    __mt_read_into(__mt_v, (p));                  \
    __mt_v;                                       \
  })
#define __mt_idx(p, i) __mt_deref((p) + (i))

/* A number read through a pointer to a kernel struct: where the kernel has
 * the kfunc bpf_rdonly_cast (6.2 and later) and the program reads kernel
 * memory, a plain load, which the verifier guards against faults, instead
 * of a probe read's helper call. The compiler writes __mt_ld(p, path, T),
 * T being p's struct, for numbers, and for pointers that are only followed
 * on (`p->a->b`): a pointer loaded this way is one the verifier forbids
 * arithmetic on. MT_DIRECT_LOADS (set per program) says whether they load
 * directly, for C that picks its reads by it. */
#ifndef MT_HAVE_RDONLY_CAST
#define MT_HAVE_RDONLY_CAST 0
#endif
#if MT_HAVE_RDONLY_CAST
/* libbpf before 1.5 cannot link two parts that both list a kfunc in
 * .ksyms (app/compile_job.h): the second part declares it plainly and
 * the linker binds it to the first's, which lists it whether or not its
 * own programs call it. No program calls mt_list_rdonly_cast, so it is
 * never loaded. */
#if defined(MT_PART) && MT_PART == 2
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id);
#else
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __attribute__((section(".ksyms")));
#endif
#if defined(MT_PART) && MT_PART == 1
__attribute__((noinline, used)) long mt_list_rdonly_cast(const void *p) {
  return (long)bpf_rdonly_cast(p, 0);
}
#endif
/* T's id in the kernel's BTF: the generator lists those of the records it
 * defines (kernel/kernel_btf.h), a CO-RE relocation finds any other. */
#ifndef MT_KERNEL_TYPE_ID
#define MT_KERNEL_TYPE_ID(T) __builtin_btf_type_id(*(T *)0, 1)
#endif
#define __mt_ld(p, path, T)                                                                \
  (MT_DIRECT_LOADS ? ((T *)bpf_rdonly_cast((const void *)(p), MT_KERNEL_TYPE_ID(T)))->path \
                   : __mt_rd(p, path))
#define __mt_walk(p, path, T) \
  (((T *)bpf_rdonly_cast((const void *)(p), MT_KERNEL_TYPE_ID(T)))->path)
#else
#define __mt_ld(p, path, T) __mt_rd(p, path)
#define __mt_walk(p, path, T) ((p)->path)
#endif
/* In a tp_btf or fentry program, the compiler writes __mt_walk(p, path, T)
 * for a pointer loaded from a kernel struct: p's copy cast by
 * bpf_rdonly_cast is untrusted, and loading a pointer member through a
 * trusted pointer (the program's arguments) makes the verifier search the
 * kernel's BTF by name up to three times (whether the member is marked
 * trusted: 4-7 ms for io_uring_submit_req's program). A pointer so walked
 * is not trusted by default either. p itself stays trusted, for helpers. */

/* The low 32 bits of a kernel address, as a number to hash or combine: a
 * tp_btf or fentry program may compare and store a typed pointer, but the
 * verifier refuses arithmetic on it (the compiler turns (__u32)p << 32 into
 * a shift of p), except, for root, a 32-bit subtraction, whose result is a
 * number. */
static __always_inline __u64 mt_addr32(const void *p) {
  __u32 low = (__u32)(unsigned long)p;
  asm volatile("%0 -= 0" : "+w"(low));
  return low;
}
#endif
