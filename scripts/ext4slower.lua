-- ext4slower: ext4 operations slower than a threshold, like bcc's ext4slower
script{
  name = "ext4slower", version = "1.0.0",
  description = "ext4 operations slower than a threshold, like bcc's ext4slower",
  help = [[
One line per ext4 read, write, open or fsync that took at least MIN_MS
milliseconds (default 10): TIME, COMM, PID, T (R read, W write, O open,
S fsync), BYTES, OFF_KB, LAT(ms) and FILENAME. Probes ext4_file_read_iter,
ext4_file_write_iter, ext4_file_open and ext4_sync_file with kprobes,
else fentry; syncs also through ext4's sync_file tracepoints. What this
kernel cannot trace is named on stderr, and the rest traced.]],
  examples = { "sudo moontrace ext4slower 1    (slower than 1 ms; 0 shows all)" },
  requires = { api = 1 },
}

local kfunc = require "kfunc"

local target = param("pid", { type = "uint", default = 0, short = "p", help = "trace this process only" })
local min_ms = param("min_ms", { type = "uint", default = 10, positional = true,
  help = "show operations that took at least this many ms (0: all)" })

local only_target = target ~= 0 and "pid == param.pid" or nil
local slow = "latency >= param.min_ms * 1000000"
local name_of = function(file) return "str(" .. file .. "->f_path.dentry->d_name.name, 32)" end

-- Each operation: its function, the stand-ins tried after kprobe and fentry,
-- and what to keep at entry for each probe kind.
local ops = {
  { "R", "ext4_file_read_iter", {}, function(kind)
      return { offset = "args.iocb->ki_pos", file = name_of("args.iocb->ki_filp") }, true end },
  { "W", "ext4_file_write_iter", {}, function(kind)
      return { offset = "args.iocb->ki_pos", file = name_of("args.iocb->ki_filp") }, true end },
  { "O", "ext4_file_open", {}, function(kind)
      return { offset = "0", file = name_of("args.filp") }, false end },
  { "S", "ext4_sync_file",
    { { "tp_btf:ext4_sync_file_enter", "tp_btf:ext4_sync_file_exit" },
      { "tracepoint:ext4:ext4_sync_file_enter", "tracepoint:ext4:ext4_sync_file_exit" } },
    function(kind)
      if kind == "tracepoint" then return { offset = "0", ino = "args.ino" }, false end
      return { offset = "0", file = name_of("args.file") }, false
    end },
}

local missing, reason = {}, nil
for _, op in ipairs(ops) do
  local letter, fn = op[1], op[2]
  local pair, why = kfunc.pair(fn, op[3])
  if pair then
    local carry, sized = op[4](pair.kind)
    latency({
      name = fn,
      start = pair.entry,
      stop = pair.exit,
      key = "tid",
      filter = only_target,
      carry = carry,
      stop_filter = slow,
      capture = { "comm", "pid", "latency", offset = "start.offset",
                  file = carry.file and "start.file" or nil, ino = carry.ino and "start.ino" or nil,
                  bytes = sized and "retval > 0 ? retval : 0" or "0" },
    }, function(ev)
      local file = ev.file or string.format("inode %d", ev.ino)
      printf("%-8s %-14.14s %-7d %1s %-7d %-8d %7.2f %s\n", strftime(), ev.comm, ev.pid, letter,
             ev.bytes, ev.offset // 1024, ev.latency / 1e6, file)
    end)
  else
    missing[#missing + 1] = fn
    reason = reason or why
  end
end
if #missing == #ops then
  error("ext4 cannot be traced on this kernel: " .. reason)
elseif #missing > 0 then
  notice("%s cannot be traced on this kernel (%s); tracing the others",
         table.concat(missing, ", "), reason)
end

probe("begin", function()
  if min_ms == 0 then
    print("Tracing ext4 operations")
  else
    printf("Tracing ext4 operations slower than %d ms\n", min_ms)
  end
  printf("%-8s %-14s %-7s %1s %-7s %-8s %7s %s\n", "TIME", "COMM", "PID", "T", "BYTES", "OFF_KB",
         "LAT(ms)", "FILENAME")
end)
