-- four io_uring tracepoints, each its own program (one of them shared with
-- a fifth probe): counts printed at the end. --bad 14 names a field no tracepoint has in probes 1 and 4.
local bad = param("bad", { type = "string", default = "", help = "probes whose filter does not compile" })
local counts = { 0, 0, 0, 0 }
local probes = {
  "tracepoint:io_uring:io_uring_submit_req",
  "tracepoint:io_uring:io_uring_complete",
  "tracepoint:syscalls:sys_enter_io_uring_enter",
  "tracepoint:syscalls:sys_exit_io_uring_enter",
}
for i, name in ipairs(probes) do
  probe(name, { filter = bad:find(tostring(i), 1, true) and "args.no_such_field" or "1" },
        function() counts[i] = counts[i] + 1 end)
end
-- A second probe on io_uring_complete: the two share one program.
local succeeded = 0
probe("tracepoint:io_uring:io_uring_complete", { filter = "args.res == 0" },
      function() succeeded = succeeded + 1 end)
probe("end", function()
  printf("submitted=%d\ncompleted=%d\nentered=%d\nreturned=%d\nsucceeded=%d\n", counts[1],
         counts[2], counts[3], counts[4], succeeded)
end)
