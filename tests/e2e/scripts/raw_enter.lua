-- io_uring_enter timed from the raw syscall tracepoints (x86-64), which
-- every syscall fires: the guards turn the others away before anything
-- else, the stop's before it looks for a start.
local NR_IO_URING_ENTER = 426
latency{
  start = "tp_btf:sys_enter",
  stop = "tp_btf:sys_exit",
  key = "tid",
  guard = "args.id == " .. NR_IO_URING_ENTER,
  stop_guard = "args.regs->orig_ax == " .. NR_IO_URING_ENTER,
  carry = { to_submit = "(__u32)args.regs->si" },
  into = sum{ name = "submitted", value = "start.to_submit" },
}
