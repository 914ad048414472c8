-- the io_uring completions of the traced processes, counted by the kernel
-- and in Lua from one record each
local counted = map{ name = "counted", type = "percpu_array", value = "u64", size = 1 }
local records = 0
probe("tracepoint:io_uring:io_uring_complete", {
  action = "map_add(counted, 0, 1);",
  capture = { "args.user_data" },
}, function()
  records = records + 1
end)
probe("end", function()
  printf("records=%d kernel=%d\n", records, counted:get(0))
end)
