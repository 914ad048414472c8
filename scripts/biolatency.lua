-- biolatency: block request latency as histograms, like bcc's biolatency
script{
  name = "biolatency", version = "1.0.0",
  description = "block request latency as histograms, like bcc's biolatency",
  help = [[
Times each block request from its issue to the driver until it completes
(-Q: from when the block layer took it, queueing included) and prints a
log2 histogram of usecs (-m: msecs) at Ctrl-C, or every INTERVAL seconds,
COUNT times. Probes: a kprobe on blk_mq_start_request, else fentry there,
else the block_rq_issue tracepoint; block_rq_complete (-v tells which).]],
  examples = { "sudo moontrace biolatency -D 1 5    (per disk, five 1 s histograms)" },
  requires = { api = 1, probes = { { "kprobe:blk_mq_start_request", "fentry:blk_mq_start_request",
                           "tp_btf:block_rq_issue", "tracepoint:block:block_rq_issue" },
                         { "tp_btf:block_rq_complete", "tracepoint:block:block_rq_complete" } } },
}

local blockio = require "blockio"

local queued = param("queued", { type = "bool", short = "Q",
  help = "from when the block layer took the request (queueing included), not its issue" })
local ms = param("milliseconds", { type = "bool", short = "m", help = "histograms in msecs" })
local per_disk = param("disks", { type = "bool", short = "D", help = "a histogram per disk" })
local disk_name = param("disk", { type = "string", default = "", short = "d",
  help = "trace this disk only (e.g. sda, nvme0n1)" })
local stamp = param("timestamp", { type = "bool", short = "T", help = "print the time on each interval" })
local interval = param("interval", { type = "uint", default = 0, positional = true,
  help = "print every INTERVAL seconds (0: once, at Ctrl-C)" })
local times = param("count", { type = "uint", default = 0, positional = true,
  help = "stop after COUNT intervals (0: never)" })

local b, why = blockio.probes(blockio.disk(disk_name), queued)
if not b then error(why) end
local issue, done = b.at(b.issue), b.at(b.done)

local lat = hist{ name = "latency", unit = ms and "ms" or "us", print = false,
                  by = per_disk and { disk = done.disk } or nil,
                  value = queued and "latency + start.waited" or nil }
b.requests{ name = "requests", carry = queued and { waited = blockio.waited(issue) } or nil,
            into = lat }

probe("begin", function()
  print("Tracing block device I/O... Hit Ctrl-C to end.")
end)

local printed = 0
local function show()
  if stamp then
    printf("\n%s\n", strftime())
  else
    print()
  end
  lat:print()
end
if interval > 0 then
  probe("interval:s:" .. interval, function()
    show()
    lat:clear()
    printed = printed + 1
    if times > 0 and printed >= times then exit() end
  end)
end
probe("end", function()
  if interval == 0 or times == 0 or printed < times then show() end
end)
