-- Every declaration the Lua API has, once: a seed for script_front_end_fuzzer.
local fmt = require "fmt"
local quantiles = require "quantiles"
local n = param("n", { type = "uint", default = 3, help = "count", short = "n" })
local on = param("on", { type = "bool", default = true })
local who = param("who", { type = "string", default = "fio" })
local period = param("period", { type = "int", default = 1, positional = true })
local m = map{ name = "m", type = "lru_hash", key = { pid = "u32", fd = "s32" },
               value = { count = "u64", last = "u64" }, size = 64 }
local a = map{ name = "a", type = "percpu_array", key = "u32", value = "u64", size = 4, print = false }
local c = count{ name = "c", by = { "comm", op = "args.opcode" } }
local s = sum{ name = "s", value = "args.res", unit = "ms", size = 100 }
local st = stats{ name = "st", value = "args.res" }
local lh = lhist{ name = "lh", value = "args.res", min = 0, max = 100, step = 10 }
local h = hist{ name = "h", unit = "us", by = { "cpu" } }
local mn, mx, av = min{ name = "mn", value = "pid" }, max{ name = "mx", value = "tid" }, avg{ name = "av", value = "uid" }
fxt{ file = "tour.fxt" }
local entry, why = available({ "kprobe:vfs_read", "fentry:vfs_read", "tracepoint:syscalls:sys_enter_read" })
if not entry then notice("no read probe: %s", why) end
local d, reason = disk("sda")
probe({ "tracepoint:io_uring:io_uring_submit_req", "tracepoint:io_uring:io_uring_submit_sqe" }, {
  filter = "args.opcode != 0 && param.on",
  action = "map_add(m, map_key(m, .pid = pid, .fd = 3), 1); map_ptr(m, map_key(m, pid, 4));",
  capture = { ud = "args.user_data", op = "args.op_str", "comm", name = "str(args.ctx, 8)" },
  aggregate = { c, mn, mx, av },
  draw = { kind = "slice", name = "submit", category = "io_uring", track = "process",
           args = { "args.user_data", req = "args.req" }, flow = { id = "args.req", step = "begin" } },
}, function(ev) printf("%s %d\n", ev.comm, ev.ud) end)
probe("tracepoint:io_uring:io_uring_complete", { aggregate = { s, st, lh } })
latency({ start = "tracepoint:io_uring:io_uring_submit_req", stop = "tracepoint:io_uring:io_uring_complete",
         key = { req = "(__u64)args.req" }, carry = { "args.opcode" }, into = h,
         stop_filter = "latency > 1000", capture = { "latency", op = "start.opcode" },
         draw = { kind = "counter", name = "lat", args = { v = "latency" } } },
         function(ev) report{ type = "lat", data = { ev.latency, ev.op } } end)
probe("interval:ms:100", function() h:print(); h:clear(); print(lost()) end)
probe("tracepoint:io_uring:io_uring_c*", {})
probe("begin", function() print(strftime("%H:%M:%S")) end)
probe("end", function() for _, e in ipairs(m:entries()) do print(e.key.pid, e.value.count) end end)
