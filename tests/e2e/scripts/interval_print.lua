-- print and clear a count every 100 ms, like bcc tools with an interval
local c = count{ name = "completions", print = false }
probe("tracepoint:io_uring:io_uring_complete", { aggregate = c })
probe("interval:ms:100", function()
  c:print()
  c:clear()
end)
probe("end", function()
  c:print()
end)
