-- sizes asked of read(2), from the syscall tracepoint
probe("tracepoint:syscalls:sys_enter_read", { capture = { "args.count" } })
