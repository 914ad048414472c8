-- A big program that reads no kernel pointer (only its tracepoint's
-- fields) and a small one that does (task->real_parent->tgid, a direct
-- load through bpf_rdonly_cast where the kernel has it): compiled in two
-- parts, the big one is in the first and only the second calls the kfunc.
local fields = {}
for i = 1, 40 do
  fields["f" .. i] = "args.to_submit + " .. i
end
local entered = 0
probe("tracepoint:syscalls:sys_enter_io_uring_enter",
      { filter = "args.fd >= 0", capture = fields }, function() entered = entered + 1 end)
local parents = {}
probe("tracepoint:io_uring:io_uring_complete", { capture = { parent = "task->real_parent->tgid" } },
      function(e) parents[e.parent] = true end)
probe("end", function()
  for parent in pairs(parents) do printf("parent=%d\n", parent) end
  printf("entered=%d\n", entered)
end)
