-- bench/uring.sh: the floor for scripts/uring.lua. An empty program on each
-- tracepoint uring.lua attaches (all 17 io_uring ones, the enter and exit
-- of io_uring_setup, io_uring_register and io_uring_enter) and on the two
-- the trace's thread naming adds (sched_process_exec, task_rename): the
-- bare cost of running BPF there, with no map, record or output.
-- uring.lua attaches several programs to some of these (five to
-- io_uring_complete); the floor has one on each.
local tracepoints = {
  { "tracepoint:io_uring:io_uring_submit_req", "tracepoint:io_uring:io_uring_submit_sqe" },
  "tracepoint:io_uring:io_uring_create",
  "tracepoint:io_uring:io_uring_file_get",
  "tracepoint:io_uring:io_uring_queue_async_work",
  "tracepoint:io_uring:io_uring_poll_arm",
  "tracepoint:io_uring:io_uring_task_add",
  "tracepoint:io_uring:io_uring_defer",
  "tracepoint:io_uring:io_uring_link",
  "tracepoint:io_uring:io_uring_complete",
  "tracepoint:io_uring:io_uring_fail_link",
  "tracepoint:io_uring:io_uring_req_failed",
  "tracepoint:io_uring:io_uring_register",
  "tracepoint:io_uring:io_uring_short_write",
  "tracepoint:io_uring:io_uring_task_work_run",
  "tracepoint:io_uring:io_uring_local_work_run",
  "tracepoint:io_uring:io_uring_cqe_overflow",
  "tracepoint:io_uring:io_uring_cqring_wait",
  "tracepoint:sched:sched_process_exec",
  "tracepoint:task:task_rename",
}
for _, call in ipairs({ "io_uring_setup", "io_uring_register", "io_uring_enter" }) do
  tracepoints[#tracepoints + 1] = "tracepoint:syscalls:sys_enter_" .. call
  tracepoints[#tracepoints + 1] = "tracepoint:syscalls:sys_exit_" .. call
end
for _, tp in ipairs(tracepoints) do
  probe(tp)
end
