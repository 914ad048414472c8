-- For the split-compile tests: a big program that reads no kernel
-- pointer (io_uring_enter capturing 40 of its tracepoint's fields), which
-- a compile in two parts puts in the first part, alone. Returns a
-- function that tells how many times it ran.
local fields = {}
for i = 1, 40 do
  fields["f" .. i] = "args.to_submit + " .. i
end
local entered = 0
probe("tracepoint:syscalls:sys_enter_io_uring_enter",
      { filter = "args.fd >= 0", capture = fields }, function() entered = entered + 1 end)
return function() return entered end
