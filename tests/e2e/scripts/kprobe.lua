-- kprobes do not exist on this kernel: loads, then fails to attach
probe("kprobe:vfs_read", { capture = { "args.count" } })
