-- every io_uring request's latency sent to Lua, with its opcode carried
-- from submission; stop_filter sees the latency
local seen = 0
latency({
  start = "tracepoint:io_uring:io_uring_submit_req",
  stop = "tracepoint:io_uring:io_uring_complete",
  key = "args.req",
  carry = { "args.opcode" },
  stop_filter = "latency > 0",
  capture = { op = "start.opcode", "latency", "args.user_data" },
}, function(ev)
  printf("op=%d user_data=%d positive=%s\n", ev.op, ev.user_data, tostring(ev.latency > 0))
end)
