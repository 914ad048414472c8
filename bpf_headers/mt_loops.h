/* Loops whose body the verifier checks a few times, not once per step.
 *
 * The verifier walks a plain loop step by step (or clang unrolls it), so a
 * loop of 8 steps with a few branches costs thousands of checked
 * instructions: io_uring_enter's reap loop in uring.lua cost 5,700 of the
 * 30,000 a warm start of it waits for. Where the kernel has the number
 * iterator (the kfuncs bpf_iter_num_*, 6.4 and later), the verifier checks
 * the body until what it knows at the top stops changing, usually twice.
 *
 *   mt_for(i, 0, 8) { ... }
 *
 * runs the body with i, an int of the loop's own, = 0 .. 7; break,
 * continue and return work as in a for loop, and what the body does to i
 * changes no step. start and end are ints, read once before the first
 * step (a kernel read in them is not rewritten: read it into a local
 * first), at most 8,388,608 steps apart: the iterator runs no step of a
 * wider range. Without the iterator it is a for loop over a counter of its
 * own. */
#ifndef MT_LOOPS_H
#define MT_LOOPS_H

#ifndef MT_HAVE_ITER_NUM
#define MT_HAVE_ITER_NUM 0
#endif

#if MT_HAVE_ITER_NUM
struct bpf_iter_num {
  __u64 __opaque[1];
} __attribute__((aligned(8)));

/* Listed in .ksyms as bpf_rdonly_cast is (mt_helpers.h): in the second
 * part plainly, for libbpf before 1.5 to link, the first part listing
 * them whether or not its own programs loop. */
#if defined(MT_PART) && MT_PART == 2
#define MT_KFUNC
#else
#define MT_KFUNC __attribute__((section(".ksyms")))
#endif
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) MT_KFUNC;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) MT_KFUNC;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) MT_KFUNC;
#undef MT_KFUNC
#if defined(MT_PART) && MT_PART == 1
__attribute__((noinline, used)) long mt_list_iter_num(struct bpf_iter_num *it) {
  bpf_iter_num_new(it, 0, 1);
  long stepped = (long)bpf_iter_num_next(it);
  bpf_iter_num_destroy(it);
  return stepped;
}
#endif

/* The bounds are read once, before i is declared: what the body does to
 * them changes no step either. The iterator is destroyed however the loop
 * is left (the cleanup attribute); the outer loop runs once, to declare
 * the bounds and i. The value the iterator gives is checked against the
 * bounds again, so that the verifier knows its range. Naming the
 * destructor once more makes clang describe it in BTF, which libbpf needs
 * to find it; a cleanup attribute alone does not. */
#define mt_for(i, start, end)                                                                    \
  for (int __mt_from = (start), __mt_to = (end), i = 0, __mt_once = 1; __mt_once; __mt_once = 0) \
    for (struct bpf_iter_num __mt_iter __attribute__((cleanup(bpf_iter_num_destroy))),           \
         *__mt_started                                                                           \
         __attribute__((unused)) = (bpf_iter_num_new(&__mt_iter, __mt_from, __mt_to),            \
                                    (void)bpf_iter_num_destroy, (void *)0);                      \
         ({                                                                                      \
           int *__mt_step = bpf_iter_num_next(&__mt_iter);                                       \
           __mt_step &&*__mt_step >= __mt_from &&*__mt_step < __mt_to && ((i) = *__mt_step, 1);  \
         });)
#else
#define mt_for(i, start, end)                                                                    \
  for (int __mt_step = (start), __mt_to = (end), i; __mt_step < __mt_to && ((i) = __mt_step, 1); \
       __mt_step++)
#endif

#endif
