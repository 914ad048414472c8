-- stdlib/blockio on the block tracepoints' own fields, as on a kernel
-- without BTF: only tracepoint alternatives are available to it here.
local real_available = available
available = function(names)
  local kept = {}
  for _, name in ipairs(type(names) == "table" and names or { names }) do
    if name:match("^tracepoint:") then kept[#kept + 1] = name end
  end
  return real_available(kept)
end
local blockio = require "blockio"

local disk_name = param("disk", { type = "string", help = "the disk" })
local b = assert(blockio.probes(blockio.disk(disk_name)))
local issue = b.at(b.issue)
b.requests({ carry = { sector = issue.sector, bytes = issue.bytes, op = issue.op },
             capture = { dev = b.at(b.done).disk, sector = "start.sector", bytes = "start.bytes",
                         op = "start.op", "latency" } },
           function(ev)
             printf("typed=%s dev=%d sector=%d bytes=%d op=%s\n", tostring(b.typed), ev.dev,
                    ev.sector, ev.bytes, blockio.letter(b, ev.op))
           end)
print(tostring(select(2, blockio.probes(nil, true))))
