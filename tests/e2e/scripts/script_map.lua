-- a map written by a C action, read and written from Lua while tracing
local per_pid = map{ name = "per_pid", key = "u32", value = "u64", print = true }
local marks = map{ name = "marks", type = "array", value = "s64", size = 4 }
probe("tracepoint:io_uring:io_uring_complete", { action = "map_add(per_pid, pid, 1);" })
local reads = 0
probe("interval:ms:50", function()
  reads = reads + 1
  marks:set(1, -5)
end)
probe("end", function()
  for _, e in ipairs(per_pid:entries()) do
    printf("pid=%d completions=%d\n", e.key, e.value)
    printf("get=%d\n", per_pid:get(e.key))
    per_pid:set(e.key, 7)
  end
  printf("mark=%d missing=%s\n", marks:get(1), tostring(per_pid:get(1)))
  printf("interval_reads_ok=%s\n", tostring(reads > 0))
end)
