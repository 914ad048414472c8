-- The small script bench/startup.sh times: one kernel
-- tracepoint capturing one field, with an empty Lua handler. `begin` runs
-- once every probe is attached and exits at once, so the process lifetime is
-- start-up (exec to all probes attached) plus teardown.
probe("tracepoint:io_uring:io_uring_complete", { capture = { "args.user_data" } }, function(ev) end)
probe("begin", function() exit() end)
