-- a misspelt tracepoint
probe("tracepoint:io_uring:io_uring_compleet", { capture = { "args.user_data" } })
