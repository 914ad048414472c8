-- uring_fs: the io_uring trace, with the filesystem and page cache work of each buffered request
script{
  name = "uring_fs", version = "1.0.0",
  description = "the io_uring trace, with the filesystem and page cache work of each buffered request",
  help = [[
Everything `uring` draws, and what a buffered read, write or fsync does
in the filesystem (ext4) and the page cache, drawn on the thread that
issues the request (its io-worker, or the submitting task inline),
nested under the io-worker's stint or the io_uring_enter call, each a
step of the request's flow:
  read_iter, write_iter  ext4's file read and write, from entry to return
                         (where the kernel has kprobes or fentry)
  write_begin            a write copying into one folio of the page cache:
                         ext4's (da_)write_begin to write_end
  fsync                  ext4_sync_file, from enter to exit
  get_pages              a read finding its pages in the page cache
  readahead              a read starting to read pages in
A read that had to wait for its pages is issued again from task work
once they came in; on a kernel where no probe sees io_issue_sqe, that
second issue's work is not drawn (see uring.current() in the README).]],
  examples = { "sudo moontrace -c 'fio --ioengine=io_uring ...' uring_fs" },
  requires = { api = 1, kernel = "6.1", features = { "btf" },
               optional = { "kprobe:ext4_file_read_iter", "fentry:ext4_file_read_iter",
                            "kprobe:ext4_file_write_iter", "fentry:ext4_file_write_iter",
                            "tracepoint:ext4:ext4_da_write_begin", "tracepoint:ext4:ext4_write_begin",
                            "tracepoint:ext4:ext4_sync_file_enter",
                            "tracepoint:filemap:mm_filemap_get_pages",
                            "tracepoint:readahead:page_cache_sync_ra" } },
}

local uring = require "uring"
local kfunc = require "kfunc"
local c = require("ctemplate").c

local running = uring.current()
local request = uring.request("req")
-- C, first in an action: `req`, the request this thread issues, or the
-- probe stops when there is none, it is not traced, or (INO, when given)
-- the event's inode is not its file's.
local function for_request(ino)
  local same_file = ino and c(" || ((struct io_kiocb *)req)->file->f_inode->i_ino != ${ino}",
                              { ino = ino }) or ""
  return c("__u64 req = ${running}; if (!${traced}${same_file}) return 0; ",
           { running = running, traced = request.traced, same_file = same_file })
end

-- A timed operation: a slice named SLICE (or NAME) from START to STOP on
-- the issuing thread (and inode INO, where both name it), with ARGS read
-- at the start (as `start.NAME`).
local function timed(name, start, stop, ino, args, slice)
  local carry, drawn = { flow = "(__u64)(" .. request.flow .. ")" }, {}
  for k, v in pairs(args or {}) do
    carry[k], drawn[k] = v, "start." .. k
  end
  latency{ name = name, start = start, stop = stop, key = ino and { "tid", ino } or "tid",
           start_action = for_request(ino), carry = carry,
           draw = { kind = "slice", name = slice or name, category = uring.category,
                    duration = "latency", args = drawn, flow = { id = "start.flow", point = "step" } } }
end
-- A point: a 1-ns slice where AT fires.
local function point(name, at, ino, args)
  probe(at, { action = for_request(ino),
              draw = { kind = "slice", name = name, category = uring.category, args = args,
                       flow = { id = request.flow, point = "step" } } })
end

for _, fn in ipairs({ "read_iter", "write_iter" }) do
  local pair = kfunc.pair("ext4_file_" .. fn)
  if pair then timed(fn, pair.entry, pair.exit) end
end
-- Delayed allocation's pair (ext4's default), and the other one.
for _, kind in ipairs({ "da_", "" }) do
  local at = "tracepoint:ext4:ext4_" .. kind .. "write_"
  if available(at .. "begin") then
    timed(kind .. "write_begin", at .. "begin", at .. "end", "args.ino",
          { pos = "args.pos", len = "args.len" }, "write_begin")
  end
end
if available("tracepoint:ext4:ext4_sync_file_enter") then
  timed("fsync", "tracepoint:ext4:ext4_sync_file_enter", "tracepoint:ext4:ext4_sync_file_exit",
        "args.ino")
end
if available("tracepoint:filemap:mm_filemap_get_pages") then
  point("get_pages", "tracepoint:filemap:mm_filemap_get_pages", "args.i_ino",
        { index = "args.index", last = "args.last_index" })
end
if available("tracepoint:readahead:page_cache_sync_ra") then
  point("readahead", "tracepoint:readahead:page_cache_sync_ra", "args.i_ino",
        { index = "args.index", pages = "args.req_count" })
end
