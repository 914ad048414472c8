-- A big program that reads no kernel pointer (only its tracepoint's
-- fields) and a small one that does (task->real_parent->tgid, a direct
-- load through bpf_rdonly_cast where the kernel has it): compiled in two
-- parts, the big one is in the first and only the second calls the kfunc.
local entered = require "big_program"
local parents = {}
probe("tracepoint:io_uring:io_uring_complete", { capture = { parent = "task->real_parent->tgid" } },
      function(e) parents[e.parent] = true end)
probe("end", function()
  for parent in pairs(parents) do printf("parent=%d\n", parent) end
  printf("entered=%d\n", entered())
end)
