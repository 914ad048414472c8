-- draws each io_uring completion of process --target into complete.fxt;
-- its handler raises an error at the 100th (line 12)
param("target", { type = "int", default = 0, help = "process to trace" })
fxt{ file = "complete.fxt" }
local n = 0
probe("tracepoint:io_uring:io_uring_complete", {
  filter = "pid == param.target",
  draw = { kind = "instant", name = "complete", args = { "args.user_data" } },
}, function()
  n = n + 1
  if n == 100 then
    error("the 100th completion")
  end
end)
