-- counts interval ticks; prints the count once at the end
local ticks = 0
probe("interval:ms:100", function() ticks = ticks + 1 end)
probe("end", function() printf("ticks=%d\n", ticks) end)
