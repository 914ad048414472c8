-- every io_uring completion at or above --min, as "user_data=N" lines
param("min", { type = "uint", default = 0, short = "m",
               help = "lowest user_data to show" })

probe("tracepoint:io_uring:io_uring_complete", {
  filter = "args.user_data >= param.min",
  capture = { "args.user_data" },
})
