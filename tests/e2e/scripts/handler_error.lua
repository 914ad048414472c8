-- a Lua error raised by the handler of the first event (line 5)
probe("tracepoint:io_uring:io_uring_complete", { capture = { "args.user_data" } },
  function(ev)
    local missing = nil
    return missing.field
  end)
