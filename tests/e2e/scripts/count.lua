-- counts the completions of process --target; prints the count at the end
param("target", { type = "int", default = 0, help = "process to count" })
local n = 0
probe("tracepoint:io_uring:io_uring_complete", { filter = "pid == param.target" },
      function() n = n + 1 end)
probe("end", function() printf("completions=%d\n", n) end)
