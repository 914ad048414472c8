-- a long program run (its verifier log passes 4 KiB) that ends reading far
-- past the end of its tracepoint context: the verifier refuses it
probe("tracepoint:syscalls:sys_enter_getpid", {
  action = "__u64 x = 0; for (int i = 0; i < 200; i++) x += bpf_get_prandom_u32() & 1; " ..
           "x += ((__u64 *)__ctx)[100000];",
  capture = { x = "(__u64)x" },
})
