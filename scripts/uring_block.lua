-- uring_block: the io_uring trace, with each direct read's or write's block requests in its flow
script{
  name = "uring_block", version = "1.0.0",
  description = "the io_uring trace, with each direct read's or write's block requests in its flow",
  help = [[
Everything `uring` draws, and for an O_DIRECT read or write through
iomap (ext4, xfs), each block request it issued: a `block_issue` slice
when the driver takes it and a `block_complete` slice when it is done,
on the disk's own track under "block devices", both on the request's
arrow from its submit to its completion. Parameters: those of `uring`.
Probes: tp_btf iomap_dio_rw_begin, iomap_dio_rw_queued,
iomap_dio_complete (on kernels without them: a kprobe, or fentry, on
__iomap_dio_rw, and its return), block_bio_queue, block_split, block_rq_issue,
block_rq_complete; io_uring_submit_req. An io-worker's entry left by a
direct I/O that gave up early lasts until its next direct I/O. A block
request that merged the bios of several direct I/Os is drawn on the
first's arrow.]],
  examples = { "sudo moontrace -c 'fio --direct=1 --ioengine=io_uring ...' uring_block" },
  requires = { api = 1, kernel = "6.1", features = { "btf" },
               probes = { { "tp_btf:iomap_dio_rw_begin", "kprobe:__iomap_dio_rw",
                            "fentry:__iomap_dio_rw" },
                          "tp_btf:block_bio_queue", "tp_btf:block_split", "tp_btf:block_rq_issue",
                          "tp_btf:block_rq_complete" } },
}

local uring = require "uring"
local c = require("ctemplate").c

-- The flow of the direct I/O a task is submitting, while it submits; then
-- of each bio it queued, and of the request that took the bio.
local submitting = map{ name = "dio_submitting", type = "hash", key = "u32", value = "u64",
                        size = 4096 }
local bio_flows = map{ name = "bio_flows", type = "lru_hash", key = "u64", value = "u64",
                       size = 65536 }
local rq_flows = map{ name = "rq_flows", type = "lru_hash", key = "u64", value = "u64",
                      size = 65536 }

local dio = uring.kiocb("args.iocb")
-- Where iomap begins to submit a direct I/O: its tracepoint, else (on
-- kernels without it, like 6.1) the entry of __iomap_dio_rw, whose return
-- ends the submission.
local begin, why = available({ "tp_btf:iomap_dio_rw_begin", "kprobe:__iomap_dio_rw",
                               "fentry:__iomap_dio_rw" })
if not begin then
  error("uring_block needs to see iomap submit direct I/O: " .. why)
end
probe(begin, {
  filter = dio.traced,
  action = c("__u64 flow = ${flow}; map_set(dio_submitting, tid, flow);", { flow = dio.flow }),
})
local submitted = { action = "map_del(dio_submitting, tid);" }
if begin:match("^tp_btf:") then
  -- Submitted: queued to complete later, or done already. A direct I/O
  -- that gives up before either (a NOWAIT attempt that would block) leaves
  -- its entry until the task's next request: cleared at each submission.
  probe("tp_btf:iomap_dio_rw_queued", submitted)
  probe("tp_btf:iomap_dio_complete", submitted)
  probe("tracepoint:io_uring:io_uring_submit_req", submitted)
else
  probe((begin:gsub("^fentry:", "fexit:"):gsub("^kprobe:", "kretprobe:")), submitted)
end
-- A bio is queued, or a bio too big for the device split: the part split
-- off is a bio of its own, never queued (the rest is), split while the
-- task submits.
local function bio_of_the_submission(bio)
  return { filter = "map_has(dio_submitting, tid)",
           action = c("map_set(bio_flows, (__u64)${bio}, map_get(dio_submitting, tid));", { bio = bio }) }
end
probe("tp_btf:block_bio_queue", bio_of_the_submission("args.arg0"))
probe("tp_btf:block_split", bio_of_the_submission("args.bio"))

local disk = { group = "block devices", label = "str(args.arg0->q->disk->disk_name, 32)" }
local function block_args(rq)
  return { sector = rq .. "->__sector", bytes = rq .. "->__data_len" }
end
-- The driver takes the request: it carries its first bio's flow on (a
-- request that merged several requests' bios is drawn on the first's).
probe("tp_btf:block_rq_issue", {
  filter = "map_has(bio_flows, (__u64)args.arg0->bio)",
  action = [[__u64 flow = map_get(bio_flows, (__u64)args.arg0->bio);
             map_del(bio_flows, (__u64)args.arg0->bio); map_set(rq_flows, (__u64)args.arg0, flow);]],
  draw = { kind = "slice", name = "block_issue", category = uring.category, track = disk,
           args = block_args("args.arg0"), flow = { id = "(__u64)flow", point = "step" } },
})
probe("tp_btf:block_rq_complete", {
  filter = "map_has(rq_flows, (__u64)args.arg0)",
  action = [[__u64 flow = map_get(rq_flows, (__u64)args.arg0); map_del(rq_flows, (__u64)args.arg0);]],
  draw = { kind = "slice", name = "block_complete", category = uring.category, track = disk,
           args = { error = "args.arg1" }, flow = { id = "(__u64)flow", point = "step" } },
})
