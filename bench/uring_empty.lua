-- bench/uring.sh: the floors for scripts/uring.lua. An empty program on
-- each tracepoint uring.lua attaches (all 17 io_uring ones, the enter and
-- exit of io_uring_setup, io_uring_register and io_uring_enter) and on the
-- two the trace's thread naming adds (sched_process_exec, task_rename):
-- the bare cost of running BPF there, with no map, record or output.
-- uring.lua attaches several probes to some of these (several to
-- io_uring_complete); the floor has one on each.
-- With --tp_btf the 17 io_uring ones are tp_btf programs (BTF-typed raw
-- tracepoints, which skip the classic tracepoint's copy of the arguments
-- into a buffer); the syscall ones stay classic tracepoints, as syscalls
-- have no raw tracepoint of their own.
local btf = param("tp_btf", {
  type = "bool",
  default = false,
  help = "tp_btf programs on the io_uring tracepoints",
})
local function io_uring(event)
  return btf and "tp_btf:" .. event or "tracepoint:io_uring:" .. event
end
local tracepoints = {
  { io_uring("io_uring_submit_req"), io_uring("io_uring_submit_sqe") },
}
for _, event in ipairs({
  "create", "file_get", "queue_async_work", "poll_arm", "task_add", "defer", "link",
  "complete", "fail_link", "req_failed", "register", "short_write", "task_work_run",
  "local_work_run", "cqe_overflow", "cqring_wait",
}) do
  tracepoints[#tracepoints + 1] = io_uring("io_uring_" .. event)
end
tracepoints[#tracepoints + 1] = "tracepoint:sched:sched_process_exec"
tracepoints[#tracepoints + 1] = "tracepoint:task:task_rename"
for _, call in ipairs({ "io_uring_setup", "io_uring_register", "io_uring_enter" }) do
  tracepoints[#tracepoints + 1] = "tracepoint:syscalls:sys_enter_" .. call
  tracepoints[#tracepoints + 1] = "tracepoint:syscalls:sys_exit_" .. call
end
for _, tp in ipairs(tracepoints) do
  probe(tp)
end
