-- the high resolution timers process --pid arms to sleep (in the task) and
-- their firing (in an interrupt, on the CPU that armed them): each counted
-- by the kernel and by Lua, from one record per event
param("pid", { type = "int", help = "process whose sleeps are counted" })
local armed = map{ name = "armed", key = "u64", value = "u64" }
local counted = map{ name = "counted", type = "percpu_array", value = "u64", size = 2 }
local arms, fires = 0, 0
probe("tracepoint:timer:hrtimer_start", {
  filter = "pid == param.pid",
  action = "map_set(armed, (__u64)args.hrtimer, 1); map_add(counted, 0, 1);",
  capture = { "args.hrtimer" },
}, function()
  arms = arms + 1
end)
probe("tracepoint:timer:hrtimer_expire_entry", {
  filter = "map_has(armed, (__u64)args.hrtimer)",
  action = "map_del(armed, (__u64)args.hrtimer); map_add(counted, 1, 1);",
  capture = { "args.hrtimer" },
}, function()
  fires = fires + 1
end)
probe("end", function()
  printf("arms=%d kernel_arms=%d fires=%d kernel_fires=%d\n", arms, counted:get(0), fires,
         counted:get(1))
end)
