-- each completion prints (helper 6), and so does each print's probe: its run inside its own
-- print is one the kernel skips
local print_done = 'char fmt[] = "done"; ((long (*)(const char *, __u32))6)(fmt, sizeof(fmt));'
probe("tracepoint:io_uring:io_uring_complete", { action = print_done, capture = { "args.user_data" } })
probe("tp_btf:bpf_trace_printk", { action = print_done })
