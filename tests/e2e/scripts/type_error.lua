-- a filter that names a field io_uring_complete does not have
probe("tracepoint:io_uring:io_uring_complete", {
  filter = "args.user_data > 0 && args.nosuchfield > 1",
  capture = { "args.user_data" },
})
