-- biolat.lua: block request latency by operation, and bytes per process
local lat = hist{ name = "latency", unit = "us", by = { "args.rwbs" } }
local bytes = sum{ name = "bytes", value = "args.bytes", by = { "comm" } }
probe("tracepoint:block:block_rq_issue", { aggregate = bytes })
latency{
  start = "tracepoint:block:block_rq_issue",
  stop = "tracepoint:block:block_rq_complete",
  key = { "args.dev", "args.sector" },    -- evaluated at both probes
  into = lat,
}
