-- demo: every io_uring completion of the traced program, with its result
script{
  name = "demo", version = "1.0.0",
  description = "every io_uring completion of the traced program, with its result",
  help = "Prints one line per completion: the user_data and result the kernel gave.",
  examples = { "sudo moontrace -c 'build/tests/nop_storm 8' demo" },
  requires = { api = 1, probes = { "tracepoint:io_uring:io_uring_complete" } },
}

local min_res = param("min_res", { type = "int", default = -4096,
                                   help = "only completions whose result is at least this" })

local seen = 0

probe("tracepoint:io_uring:io_uring_complete", {
  filter = "args.res >= param.min_res",
  capture = { user_data = "args.user_data", res = "args.res", "comm" },
}, function(ev)
  seen = seen + 1
  printf("%-16s user_data=%d res=%d\n", ev.comm, ev.user_data, ev.res)
end)

probe("end", function()
  printf("%d completions (result >= %d)\n", seen, min_res)
end)
