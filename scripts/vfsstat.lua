-- vfsstat: vfs operations per second, like bcc's vfsstat
script{
  name = "vfsstat", version = "1.0.0",
  description = "vfs operations per second, like bcc's vfsstat",
  help = [[
Counts calls of vfs_read, vfs_write, vfs_fsync_range (vfs_fsync calls it;
fsync(2) too, where vfs_fsync is inlined), vfs_open and vfs_create
(kprobes, else fentry) and prints them per second every INTERVAL seconds
(default 1), COUNT times (default: until Ctrl-C), then the totals of the
whole run. Where this kernel has neither probe kind, it counts the system
calls that reach each function instead, and says so: read and pread64;
write and pwrite64; fsync and fdatasync; open, openat, openat2 and creat
that succeed; mknod and mknodat of regular files (open(O_CREAT) creates
through the filesystem directly, not vfs_create, on both). vfs_open also
counts the kernel's own opens (exec opens the program). -p/-c (engine
options) keep one process.]],
  examples = { "sudo moontrace vfsstat 1 10" },
  requires = { api = 1 },
}

local interval = param("interval", { type = "uint", default = 1, positional = true,
  help = "seconds between lines" })
local max_lines = param("count", { type = "uint", default = 0, positional = true,
  help = "stop after COUNT lines (0: never)" })
if interval < 1 then error("interval must be at least 1 second") end

local regular_file = "((args.mode & 0170000) == 0100000 || (args.mode & 0170000) == 0)"
local columns = {
  { "READ", "vfs_read", { "sys_enter_read", "sys_enter_pread64" } },
  { "WRITE", "vfs_write", { "sys_enter_write", "sys_enter_pwrite64" } },
  { "FSYNC", "vfs_fsync_range", { "sys_enter_fsync", "sys_enter_fdatasync" } },
  { "OPEN", "vfs_open", { "sys_exit_open", "sys_exit_openat", "sys_exit_openat2", "sys_exit_creat" },
    "args.ret >= 0" },
  { "CREATE", "vfs_create", { "sys_enter_mknod", "sys_enter_mknodat" }, regular_file },
}

local stand_ins, reason = {}, nil
for _, c in ipairs(columns) do
  c.calls = count{ name = c[2], print = false }
  local fn, why = available({ "kprobe:" .. c[2], "fentry:" .. c[2] })
  if fn then
    probe(fn, { aggregate = c.calls })
  else
    stand_ins[#stand_ins + 1] = c[2]
    reason = reason or why
    for _, event in ipairs(c[3]) do
      probe("tracepoint:syscalls:" .. event, { filter = c[4], aggregate = c.calls })
    end
  end
end
if #stand_ins > 0 then
  notice("%s cannot be traced on this kernel (%s); counting the system calls that reach them",
         table.concat(stand_ins, ", "), reason)
end

-- Counts stay in the kernel from start to end; each line is the difference.
local last = {}
local function totals()
  local now = {}
  for _, c in ipairs(columns) do
    local rows = c.calls:entries()
    now[c[1]] = rows[1] and rows[1].value or 0
  end
  return now
end

probe("begin", function()
  printf("%-8s  ", "TIME")
  for _, c in ipairs(columns) do printf(" %8s", c[1] .. "/s") end
  print()
  last = totals()
end)

local lines = 0
probe("interval:s:" .. interval, function()
  local now = totals()
  printf("%-8s: ", strftime())
  for _, c in ipairs(columns) do printf(" %8d", (now[c[1]] - last[c[1]]) // interval) end
  print()
  last = now
  lines = lines + 1
  if max_lines > 0 and lines >= max_lines then exit() end
end)

probe("end", function()
  local now = totals()
  printf("%-10s", "TOTAL:")
  for _, c in ipairs(columns) do printf(" %8d", now[c[1]]) end
  print()
end)
