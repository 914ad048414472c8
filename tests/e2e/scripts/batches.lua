-- io_uring_enter batch sizes: every aggregation over the same values
local to_submit = "args.to_submit"
local aggs = {
  stats{ name = "stats", value = to_submit },
  sum{ name = "sum", value = to_submit },
  min{ name = "min", value = to_submit },
  max{ name = "max", value = to_submit },
  avg{ name = "avg", value = to_submit },
  count{ name = "calls" },
  hist{ name = "hist", value = to_submit },
  lhist{ name = "lhist", value = to_submit, min = 0, max = 10, step = 5 },
}
probe("tracepoint:syscalls:sys_enter_io_uring_enter", { aggregate = aggs })
-- each call timed from entry to exit, keyed by thread
latency{
  start = "tracepoint:syscalls:sys_enter_io_uring_enter",
  stop = "tracepoint:syscalls:sys_exit_io_uring_enter",
  key = "tid",
  into = count{ name = "timed_calls" },
}
