-- opens.lua: files opened by a process, with the result
local min = param("min_fd", { type = "int", default = 0, help = "smallest fd to show" })

probe("tracepoint:syscalls:sys_exit_openat", {
  filter = "args.ret >= param.min_fd",
  capture = { fd = "args.ret", "comm", "pid" },
}, function(ev)
  printf("%-16s %6d fd=%d\n", ev.comm, ev.pid, ev.fd)
end)

probe("interval:s:1", function() print("tick") end)
probe("end", function() print("done") end)
