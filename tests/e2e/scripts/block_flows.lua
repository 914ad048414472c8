-- a flow per block request on one device, from its issue (in the writer)
-- to its completion (in an interrupt or a kworker); --ends_only leaves the
-- issues out, so that no end has its begin; --on_device draws completions
-- on the device's track, under a process "block devices" (--by_name: the
-- track named by the disk's name, from tp_btf's struct request);
-- --any_device draws completions of every device
local dev = param("dev", { type = "uint", help = "device, as the block tracepoints print it" })
local ends_only = param("ends_only", { type = "bool", help = "draw no issue" })
local on_device = param("on_device", { type = "bool", help = "completions on the device's track" })
local by_name = param("by_name", { type = "bool", help = "the device's track named by its name" })
param("any_device", { type = "bool", help = "draw completions of every device" })
fxt{ file = "blocks.fxt" }
probe("tracepoint:block:block_rq_issue", {
  filter = "args.dev == param.dev && !param.ends_only",
  draw = { kind = "slice", name = "issue", args = { "args.sector" },
           flow = { id = "((__u64)args.dev << 40 | args.sector)", point = "begin" } },
})
if by_name then
  local disk = "args.arg0->q->disk"
  local dev_of = "((__u64)" .. disk .. "->major << 20 | " .. disk .. "->first_minor)"
  probe("tp_btf:block_rq_complete", {
    filter = dev_of .. " == param.dev",
    draw = { kind = "slice", name = "complete", args = { sector = "args.arg0->__sector" },
             flow = { id = "(" .. dev_of .. " << 40 | args.arg0->__sector)", point = "end" },
             track = { group = "block devices", label = "str(" .. disk .. "->disk_name, 32)" } },
  })
else
  probe("tracepoint:block:block_rq_complete", {
    filter = "param.any_device || args.dev == param.dev",
    draw = { kind = "slice", name = "complete", args = { "args.sector" },
             flow = { id = "((__u64)args.dev << 40 | args.sector)", point = "end" },
             track = on_device and { group = "block devices", name = "dev", label = "args.dev" } or nil },
  })
end
