-- completions with an even user_data, printed by a Lua handler
probe("tracepoint:io_uring:io_uring_complete", {
  filter = "args.user_data % 2 == 0",
  capture = { ud = "args.user_data", res = "args.res" },
}, function(ev)
  printf("user_data=%d res=%d\n", ev.ud, ev.res)
end)
