-- A big program that does not loop and a small one with an mt_for loop
-- (bpf_headers/mt_loops.h): compiled in two parts, the big one is in the
-- first, and only the second calls the kernel's number iterator, where
-- the kernel has one. What the body does to i and to the bound changes no
-- step.
local entered = require "big_program"
local sums = map{ name = "sums", key = "u64", value = "u64" }
probe("tracepoint:io_uring:io_uring_complete", {
  action = [[
    __u64 s = 0; int to = 10;
    mt_for(i, 0, to) { to = 3; if (i == 7) break; if (i % 2) continue; s += i; i = 100; }
    map_add(sums, s, 1);
  ]],
})
probe("end", function()
  for _, e in ipairs(sums:entries()) do printf("sum=%d\n", e.key) end
  printf("entered=%d\n", entered())
end)
