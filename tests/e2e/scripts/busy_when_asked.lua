-- A big map and a probe; with MT_TEST_BUSY set (os: --unsafe) its top
-- level never ends, while a warm start makes the map on a thread.
local big = map{ name = "big", type = "hash", key = "u32", value = "u64", size = 2000000 }
probe("tracepoint:syscalls:sys_enter_getppid", { action = "map_set(big, pid, 1);" },
      function() exit() end)
if os.getenv("MT_TEST_BUSY") then
  while true do end
end
