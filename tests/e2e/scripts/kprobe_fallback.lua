-- the kprobe is missing here, so the tracepoint is used
probe({ "kprobe:vfs_read", "tracepoint:syscalls:sys_enter_read" }, { capture = { "args.count" } })
