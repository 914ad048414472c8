-- draws each io_uring completion of process --target into complete.fxt
param("target", { type = "int", default = 0, help = "process to trace" })
fxt{ file = "complete.fxt" }
probe("tracepoint:io_uring:io_uring_complete", {
  filter = "pid == param.target",
  draw = { kind = "instant", name = "complete", args = { "args.user_data", "args.res" } },
})
