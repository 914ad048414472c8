-- iostack: where IO time goes, layer by layer: system calls, vfs, ext4, block
script{
  name = "iostack", version = "1.0.0",
  description = "where IO time goes, layer by layer: system calls, vfs, ext4, block",
  help = [[
A latency histogram (nsecs; -m: msecs) per operation of each layer, and a
table of their counts and summed time, at Ctrl-C (or when -c's command
exits), like IOStackBreakdown:
  syscall  read (read, pread64), write (write, pwrite64), open (open,
           openat), fsync (fsync, fdatasync): their tracepoints
  vfs      vfs_read, vfs_write, vfs_open, vfs_fsync_range (which vfs_fsync
           calls, and fsync(2) where vfs_fsync is inlined): kprobes, else fentry
  ext4     ext4_file_read_iter, ext4_file_write_iter, ext4_file_open,
           ext4_sync_file: kprobes, else fentry; sync also through ext4's
           sync_file tracepoints; where read and write cannot be timed,
           iomap_dio (a direct read or write the caller waits for, iomap's
           tracepoints) and ext4_write_begin (a buffered write's copy into
           one folio, ext4's write_begin to write_end) stand in
  blk      each request from its issue to the driver until done (-Q: from
           when the block layer took it): a kprobe on blk_mq_start_request,
           else fentry, else block_rq_issue; block_rq_complete
What this kernel cannot trace is named on stderr, and the rest traced
(-v tells which probes were chosen). -p keeps one process's system calls,
vfs and ext4 operations (not its children's); block requests are kept by
disk (-d), as whoever issues them, often a kernel thread, is not the
process that caused them.
With -o FILE.fxt (or .fxt.gz) it also writes a trace for Perfetto: each
operation as a slice on its thread, nested as the layers call each other
(syscall > vfs > ext4), and each block request as a slice on its disk's
track under "block devices", with an arrow from a blk_issue mark on the
thread that issued it.]],
  examples = { "sudo moontrace iostack -T all -p 1234 -d nvme0n1" },
  requires = { api = 1 },
}

local kfunc = require "kfunc"
local blockio = require "blockio"

local only = param("type", { type = "string", default = "all", short = "T",
  choices = { "syscall", "vfs", "ext4", "blk", "all" }, help = "the layer to trace" })
local target = param("pid", { type = "uint", default = 0, short = "p",
  help = "trace this process only (not the block layer)" })
local disk_name = param("disk", { type = "string", default = "", short = "d",
  help = "block layer: trace this disk only (e.g. sda, nvme0n1)" })
local queued = param("queued", { type = "bool", short = "Q",
  help = "block layer: from when the block layer took the request, queueing included" })
local ms = param("milliseconds", { type = "bool", short = "m", help = "milliseconds, not nanoseconds" })

local layers = { "syscall", "vfs", "ext4", "blk" }
local the_disk = blockio.disk(disk_name)
local drawing = output_is_trace()
if drawing then
  fxt{ file = "iostack.fxt" }
end
-- An operation drawn from its start to its end, when tracing to a file.
local function slice(layer, name)
  return drawing and { kind = "slice", name = name, category = layer, duration = "latency" } or nil
end

local unit = ms and "ms" or "ns"
local ops = {}  -- {layer =, name =, hist =, total =}, in the order printed
-- An operation's histogram and total, fed the latency (or `value`).
local function op(layer, name, value)
  local o = { layer = layer, name = name,
              hist = hist{ name = name, unit = unit, print = false, value = value },
              total = stats{ name = name .. "_total", unit = unit, print = false, value = value } }
  ops[#ops + 1] = o
  return { o.hist, o.total }
end
local one_process = target ~= 0 and "pid == param.pid" or nil
local untraced = {}  -- layer -> {functions}, and why
local function cannot(layer, what, why)
  untraced[layer] = untraced[layer] or { what = {}, why = why }
  table.insert(untraced[layer].what, what)
end

-- A kernel function timed from entry to return, in the layer's table.
local function timed(layer, fn, stand_ins)
  local pair, why = kfunc.pair(fn, stand_ins)
  if not pair then
    cannot(layer, fn, why)
    return
  end
  latency{ name = fn, start = pair.entry, stop = pair.exit, key = "tid", filter = one_process,
           into = op(layer, fn), draw = slice(layer, fn) }
  return true
end

local tracing = {}
local function wanted(layer)
  if only ~= "all" and only ~= layer then return false end
  tracing[#tracing + 1] = layer
  return true
end

if wanted("syscall") then
  for _, o in ipairs({ { "read", "read", "pread64" }, { "write", "write", "pwrite64" },
                       { "open", "open", "openat" }, { "fsync", "fsync", "fdatasync" } }) do
    local into = op("syscall", "sys_" .. o[1])
    for i = 2, #o do
      latency{ name = "sys_" .. o[i], start = "tracepoint:syscalls:sys_enter_" .. o[i],
               stop = "tracepoint:syscalls:sys_exit_" .. o[i], key = "tid", filter = one_process,
               into = into, draw = slice("syscall", "sys_" .. o[i]) }
    end
  end
end

if wanted("vfs") then
  for _, fn in ipairs({ "vfs_read", "vfs_write", "vfs_open", "vfs_fsync_range" }) do
    timed("vfs", fn)
  end
end

if wanted("ext4") then
  local read_and_write = timed("ext4", "ext4_file_read_iter")
  read_and_write = timed("ext4", "ext4_file_write_iter") and read_and_write
  timed("ext4", "ext4_file_open")
  timed("ext4", "ext4_sync_file",
        { { "tp_btf:ext4_sync_file_enter", "tp_btf:ext4_sync_file_exit" },
          { "tracepoint:ext4:ext4_sync_file_enter", "tracepoint:ext4:ext4_sync_file_exit" } })
  -- Where ext4's read and write cannot be timed, the parts of them that
  -- tracepoints show: a direct read or write in iomap, to its end when the
  -- caller waits for it (a synchronous kiocb, without ki_complete), and a
  -- buffered write's copy into each folio of the page cache.
  if not read_and_write then
    local dio = available({ "tp_btf:iomap_dio_rw_begin" }) and available({ "tp_btf:iomap_dio_complete" })
    if dio then
      local waited = "!args.iocb->ki_complete && " .. (one_process or "1")
      latency{ name = "iomap_dio", start = "tp_btf:iomap_dio_rw_begin", stop = "tp_btf:iomap_dio_complete",
               key = "tid", filter = waited, stop_filter = waited, into = op("ext4", "iomap_dio"),
               draw = slice("ext4", "iomap_dio") }
    end
    local into = op("ext4", "ext4_write_begin")
    for _, kind in ipairs({ "da_", "" }) do  -- delayed allocation's pair (the default), the other
      local at = "tracepoint:ext4:ext4_" .. kind .. "write_"
      if available(at .. "begin") then
        latency{ name = "ext4_" .. kind .. "write_begin", start = at .. "begin", stop = at .. "end",
                 key = { "tid", "args.ino" }, filter = one_process, into = into,
                 draw = slice("ext4", "ext4_write_begin") }
      end
    end
  end
end

if wanted("blk") then
  local b, why = blockio.probes(the_disk, queued)
  if not b then
    cannot("blk", "block requests", why)
  else
    local carry, value
    if queued then
      carry = { waited = blockio.waited(b.at(b.issue)) }
      value = "latency + start.waited"
    end
    local issue, done = b.at(b.issue), b.at(b.done)
    local start_draw, draw
    if drawing then
      -- A mark where the request is issued, with an arrow to the request
      -- on its disk's track (requests in flight together overlap there:
      -- the trace puts those in lanes, see the README).
      start_draw = { kind = "slice", name = "blk_issue", category = "blk",
                     flow = { id = issue.id, point = "begin" } }
      draw = slice("blk", "blk_request")
      draw.args = { sector = done.sector }
      draw.track = { group = "block devices", label = done.disk, name = b.typed and "" or "dev" }
      draw.flow = { id = done.id, point = "end" }
    end
    b.requests{ name = "blk_request", carry = carry, into = op("blk", "blk_request", value),
                start_draw = start_draw, draw = draw }
  end
end

-- Layers with nothing to trace here are named; a layer asked for alone
-- that cannot be traced at all is an error.
for _, layer in ipairs(layers) do
  local u = untraced[layer]
  if u then
    local all = true
    for _, o in ipairs(ops) do all = all and o.layer ~= layer end
    if all and only == layer then
      error("the " .. layer .. " layer cannot be traced on this kernel: " .. u.why)
    end
    notice("%s: %s cannot be traced on this kernel (%s)", layer,
           all and "the layer" or table.concat(u.what, ", "), u.why)
  end
end

probe("begin", function()
  printf("Tracing the IO stack (%s)... Hit Ctrl-C to end.\n", table.concat(tracing, " "))
end)

probe("end", function()
  local rows = {}
  for _, o in ipairs(ops) do
    local s = o.total:entries()[1] or { count = 0, sum = 0, avg = 0 }
    if s.count > 0 then
      print()
      o.hist:print()
    end
    rows[#rows + 1] = { o.layer, o.name, s.count, s.sum, s.avg }
  end
  local label = ms and "ms" or "ns"
  printf("\n%-8s %-22s %10s %16s %14s\n", "LAYER", "OPERATION", "COUNT", "TOTAL(" .. label .. ")",
         "AVG(" .. label .. ")")
  for _, r in ipairs(rows) do
    printf("%-8s %-22s %10d %16d %14d\n", r[1], r[2], r[3], r[4], r[5])
  end
end)
