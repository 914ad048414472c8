-- every io_uring request as a slice from its submission to its completion,
-- drawn on the completing thread: requests in flight together overlap
fxt{ file = "requests.fxt" }
latency{
  name = "requests",
  start = "tracepoint:io_uring:io_uring_submit_req",
  stop = "tracepoint:io_uring:io_uring_complete",
  key = { req = "(__u64)args.req" },
  draw = { kind = "slice", name = "request", duration = "latency", args = { "args.user_data" } },
}
probe("tracepoint:io_uring:io_uring_submit_req", {
  draw = { kind = "slice", name = "submit", args = { "args.user_data" } },
})
