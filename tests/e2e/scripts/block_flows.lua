-- a flow per block request on one device, from its issue (in the writer)
-- to its completion (in an interrupt or a kworker); --ends_only leaves the
-- issues out, so that no end has its begin
local dev = param("dev", { type = "uint", help = "device, as the block tracepoints print it" })
local ends_only = param("ends_only", { type = "bool", help = "draw no issue" })
fxt{ file = "blocks.fxt" }
local request = "((__u64)args.dev << 40 | args.sector)"
probe("tracepoint:block:block_rq_issue", {
  filter = "args.dev == param.dev && !param.ends_only",
  draw = { kind = "slice", name = "issue", args = { "args.sector" },
           flow = { id = request, point = "begin" } },
})
probe("tracepoint:block:block_rq_complete", {
  filter = "args.dev == param.dev",
  draw = { kind = "slice", name = "complete", args = { "args.sector" },
           flow = { id = request, point = "end" } },
})
