/* x86-64 struct pt_regs, as kprobe and uprobe programs receive it. */
#ifndef MT_PT_REGS_H
#define MT_PT_REGS_H
#include "mt_types.h"
struct mt_pt_regs {
  unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
  unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#endif
