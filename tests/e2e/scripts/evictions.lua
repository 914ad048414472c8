-- a latency pair whose stop never finds its start: the starts stay bounded
-- (keyed by the pid too: another process's stop on another CPU can read
-- the very nanosecond a start was keyed by)
latency{
  name = "unmatched",
  start = "tracepoint:io_uring:io_uring_submit_req",
  stop = "tracepoint:io_uring:io_uring_complete",
  key = { "nsecs", "pid" },
  size = 64,
  into = hist{ name = "never" },
}
