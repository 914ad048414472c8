-- every io_uring tracepoint
probe("tracepoint:io_uring:*", { capture = { "pid" } })
