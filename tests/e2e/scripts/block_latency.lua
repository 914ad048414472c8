-- block request latency on one device, issue to completion, in usecs
local dev = param("dev", { type = "uint", help = "device, as the block tracepoints print it" })
local latency_us = hist{ name = "latency", unit = "us", by = { "args.rwbs" } }
local bytes = sum{ name = "bytes", value = "args.bytes" }
probe("tracepoint:block:block_rq_issue", { filter = "args.dev == param.dev", aggregate = bytes })
latency{
  name = "requests",
  start = "tracepoint:block:block_rq_issue",
  stop = "tracepoint:block:block_rq_complete",
  key = { "args.dev", "args.sector" },
  filter = "args.dev == param.dev",
  into = latency_us,
}
