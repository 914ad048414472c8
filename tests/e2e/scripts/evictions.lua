-- a latency pair whose stop never finds its start: the starts stay bounded
latency{
  name = "unmatched",
  start = "tracepoint:io_uring:io_uring_submit_req",
  stop = "tracepoint:io_uring:io_uring_complete",
  key = { "nsecs" },
  size = 64,
  into = hist{ name = "never" },
}
