-- biosnoop: one line per block request, like bcc's biosnoop
script{
  name = "biosnoop", version = "1.0.0",
  description = "one line per block request, like bcc's biosnoop",
  help = [[
Prints a line as each request completes: TIME(s) since the first, the
COMM and PID that issued it, its DISK, T (R read, W write, F flush, D
discard), SECTOR, BYTES and LAT(ms) from its issue to the driver until
done; -Q adds QUE(ms), the time it waited in the block layer before.
Probes: a kprobe on blk_mq_start_request, else fentry there, else the
block_rq_issue tracepoint; block_rq_complete (-v tells which).]],
  examples = { "sudo moontrace biosnoop -d nvme0n1" },
  requires = { api = 1, probes = { { "kprobe:blk_mq_start_request", "fentry:blk_mq_start_request",
                           "tp_btf:block_rq_issue", "tracepoint:block:block_rq_issue" },
                         { "tp_btf:block_rq_complete", "tracepoint:block:block_rq_complete" } } },
}

local blockio = require "blockio"

local queued = param("queued", { type = "bool", short = "Q",
  help = "add QUE(ms): the time the request waited in the block layer" })
local disk_name = param("disk", { type = "string", default = "", short = "d",
  help = "trace this disk only (e.g. sda, nvme0n1)" })

local b, why = blockio.probes(blockio.disk(disk_name), queued)
if not b then error(why) end
local issue, done = b.at(b.issue), b.at(b.done)

-- Who issued the request and what it was are taken at issue.
local carry = { "comm", "pid", sector = issue.sector, bytes = issue.bytes, op = issue.op }
local capture = { ts = "nsecs", "latency", comm = "start.comm", pid = "start.pid",
                  sector = "start.sector", bytes = "start.bytes", op = "start.op",
                  disk = done.disk }
if queued then
  carry.waited = blockio.waited(issue)
  capture.waited = "start.waited"
end

local first
b.requests({ name = "requests", carry = carry, capture = capture }, function(ev)
  first = first or ev.ts
  local disk_text = b.typed and ev.disk or string.format("%d:%d", ev.disk >> 20, ev.disk & 0xfffff)
  printf("%-11.6f %-14.14s %-7d %-9s %-1s %-10d %-7d ", (ev.ts - first) / 1e9, ev.comm, ev.pid,
         disk_text, blockio.letter(b, ev.op), ev.sector, ev.bytes)
  if queued then printf("%7.2f ", ev.waited / 1e6) end
  printf("%7.2f\n", ev.latency / 1e6)
end)

probe("begin", function()
  printf("%-11s %-14s %-7s %-9s %-1s %-10s %-7s ", "TIME(s)", "COMM", "PID", "DISK", "T",
         "SECTOR", "BYTES")
  if queued then printf("%7s ", "QUE(ms)") end
  printf("%7s\n", "LAT(ms)")
end)
