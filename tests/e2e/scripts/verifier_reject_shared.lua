-- two probes share sys_enter_getppid's program; the verifier refuses the
-- second's write far past its map value
local m = map{ name = "m", type = "array", key = "u32", value = "u64", size = 4 }
probe("tracepoint:syscalls:sys_enter_getppid", { action = "map_set(m, 0, 1);" })
probe("tracepoint:syscalls:sys_enter_getppid", {
  action = [[
    __u64 *p = map_ptr(m, 1);
    if (p) p[100] = 2;]] })
