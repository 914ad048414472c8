-- maps written by C actions, read and written from Lua while tracing
local per_pid = map{ name = "per_pid", key = "u32", value = "u64", print = true }
local per_cpu = map{ name = "per_cpu", type = "percpu_hash", key = "u32", value = "u64" }
local pending = map{ name = "pending", type = "lru_hash", key = "u64", value = "u64" }
local marks = map{ name = "marks", type = "array", value = "s64", size = 4 }
probe("tracepoint:io_uring:io_uring_submit_req", {
  action = "map_set(pending, args.user_data, nsecs);",
})
probe("tracepoint:io_uring:io_uring_complete", {
  filter = "map_has(pending, args.user_data)",
  action = [[
    map_add(per_pid, pid, 1);
    map_add(per_cpu, 0, map_get(pending, args.user_data) > 0);
    map_del(pending, args.user_data);
  ]],
})
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
  printf("per_cpu_sum=%d pending_left=%d\n", per_cpu:get(0), #pending:entries())
  printf("mark=%d missing=%s\n", marks:get(1), tostring(per_pid:get(1)))
  printf("interval_reads_ok=%s\n", tostring(reads > 0))
end)
