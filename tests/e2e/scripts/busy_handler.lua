-- a handler that takes about 1 ms of Lua per io_uring completion of
-- process --target (0: any): a storm of events outpaces it by far
param("target", { type = "int", default = 0, help = "process to trace; 0: any" })
local n = 0
probe("tracepoint:io_uring:io_uring_complete", { filter = "param.target == 0 || pid == param.target" }, function()
  local x = 0
  for i = 1, 100000 do x = x + i end
  n = n + 1
end)
probe("end", function() printf("handled=%d\n", n) end)
