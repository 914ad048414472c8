-- an end handler that never ends, even with a pcall around its loop
probe("interval:ms:100", function() end)
probe("end", function()
  print("ending")
  while true do pcall(function() while true do end end) end
end)
