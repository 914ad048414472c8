/* Fixed-width types for generated BPF C; no libc, no vmlinux.h. */
#ifndef MT_TYPES_H
#define MT_TYPES_H
typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef _Bool bool;
#define true 1
#define false 0
#define NULL ((void *)0)
#endif
