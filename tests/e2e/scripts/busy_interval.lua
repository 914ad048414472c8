-- an interval handler that never returns; end still runs
probe("interval:ms:50", function() while true do end end)
probe("end", function() print("end ran") end)
