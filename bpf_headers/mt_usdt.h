/* USDT probes' arguments. libbpf's bpf_program__attach_usdt() reads each
 * probe's note and describes where its arguments are (a constant, a
 * register, or memory at a register plus an offset) in the map
 * __bpf_usdt_specs, naming the entry by the attachment's cookie: these
 * maps and their layout are libbpf's (its usdt.bpf.h, which needs its other
 * headers); mt_usdt_arg() reads an argument by them. */
#ifndef MT_USDT_H
#define MT_USDT_H
#include "mt_helpers.h"
#include "mt_pt_regs.h"

enum mt_usdt_arg_type { MT_USDT_ARG_CONST, MT_USDT_ARG_REG, MT_USDT_ARG_REG_DEREF };
struct __bpf_usdt_arg_spec {
  __u64 val_off;
  enum mt_usdt_arg_type arg_type;
  short reg_off; /* in struct pt_regs */
  bool arg_signed;
  char arg_bitshift; /* bits that shift a 1, 2 or 4-byte value out to 8 and back */
};
#define MT_USDT_MAX_ARGS 12 /* libbpf's BPF_USDT_MAX_ARG_CNT */
struct __bpf_usdt_spec {
  struct __bpf_usdt_arg_spec args[MT_USDT_MAX_ARGS];
  __u64 usdt_cookie;
  short arg_cnt;
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 256); /* libbpf's BPF_USDT_MAX_SPEC_CNT */
  __type(key, int);
  __type(value, struct __bpf_usdt_spec);
} __bpf_usdt_specs SEC(".maps") MT_SHARED;
/* Used by libbpf on kernels without attachment cookies (before 5.15),
 * where these programs do not load: they ask for the cookie. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, long);
  __type(value, __u32);
} __bpf_usdt_ip_to_spec_id SEC(".maps") MT_SHARED;

static __u64 (*bpf_get_attach_cookie)(void *ctx) = (void *)174;

/* Argument `n` of the USDT probe that fired, 0 when it has none. */
static __always_inline __u64 mt_usdt_arg(struct mt_pt_regs *ctx, __u32 n) {
  int id = (int)bpf_get_attach_cookie(ctx);
  struct __bpf_usdt_spec *spec = bpf_map_lookup_elem(&__bpf_usdt_specs, &id);
  if (!spec || n >= MT_USDT_MAX_ARGS || n >= (__u32)spec->arg_cnt)
    return 0;
  struct __bpf_usdt_arg_spec *arg = &spec->args[n];
  __u64 value = 0;
  switch (arg->arg_type) {
    case MT_USDT_ARG_CONST: value = arg->val_off; break;
    case MT_USDT_ARG_REG:
      bpf_probe_read_kernel(&value, sizeof(value), (char *)ctx + arg->reg_off);
      break;
    case MT_USDT_ARG_REG_DEREF: {
      __u64 base = 0;
      bpf_probe_read_kernel(&base, sizeof(base), (char *)ctx + arg->reg_off);
      bpf_probe_read_user(&value, sizeof(value), (void *)(base + arg->val_off));
      break;
    }
    default: return 0;
  }
  /* Only the argument's own bytes, sign-extended where it is signed. */
  value <<= arg->arg_bitshift;
  if (arg->arg_signed)
    return (__u64)((__s64)value >> arg->arg_bitshift);
  return value >> arg->arg_bitshift;
}
#endif
