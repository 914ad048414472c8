-- each clock_nanosleep timed from entry to exit, keyed by thread
latency{
  name = "sleeps",
  start = "tracepoint:syscalls:sys_enter_clock_nanosleep",
  stop = "tracepoint:syscalls:sys_exit_clock_nanosleep",
  key = "tid",
  into = count{ name = "slept" },
}
