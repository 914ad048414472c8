-- every io_uring completion counted in the kernel, by command
probe("tracepoint:io_uring:io_uring_complete", {
  aggregate = { count{ name = "all" }, count{ name = "by_comm", by = { "comm" } } },
})
