-- uring: how each io_uring request travels through the kernel, for Perfetto
-- Over 500 lines: its views share their maps and helpers, so they are one script.
script{
  name = "uring", version = "1.0.0",
  description = "how each io_uring request travels through the kernel, for Perfetto",
  help = [[
Open the trace (uring.fxt, or -o FILE) in https://ui.perfetto.dev.
Draws, per thread: a slice for every io_uring_setup, io_uring_register and
io_uring_enter call, and one for every hop of a request (submit, naming
it, then file_get, queue_async_work, poll_arm, task_add, defer, link,
fail_link, req_failed, complete, with what is their own) joined by a flow,
and a flow along each chain of linked requests. io-workers and SQ poll
threads get tracks of their own, with when they ran. Each ring has a
track under its process, with counters of requests in flight and of the
submission and completion queues at every io_uring_enter, a "reaped"
mark when the application consumed completions since its last enter, and
an "overflow" mark for each completion that found the queue full. At
exit, a summary on stderr (with -f json, JSON on the output): per opcode and path
(inline, poll, io-worker, retried) the requests and their p50/p99 latency,
requests per enter, io-workers seen, overflowed completions and events
lost, then findings. Without -c or -p it traces every ring created while
it runs, until Ctrl-C.]],
  examples = { "sudo moontrace -c 'fio --ioengine=io_uring ...' uring" },
  requires = { api = 1, kernel = "6.1", features = { "btf" },
               probes = { "tracepoint:io_uring:io_uring_create",
                          { "tracepoint:io_uring:io_uring_submit_req",
                            "tracepoint:io_uring:io_uring_submit_sqe" },
                          "tracepoint:io_uring:io_uring_complete" },
               optional = { "fentry:io_issue_sqe", "kprobe:io_issue_sqe" } },
}

local sample = param("sample", { type = "uint", default = 100,
  help = "percent of requests to trace (1-100), decided once at submission" })
param("all_rings", { type = "bool", default = false,
  help = "also trace rings that existed before tracing started" })
local most_rings = param("rings", { type = "uint", default = 4096,
  help = "rings followed at once (a power of two, 4-65536); a ring created when all " ..
         "are in use takes the place of the one idle longest, and the summary says so" })
if sample < 1 or sample > 100 then
  error("--sample must be 1..100, not " .. sample)
end
if most_rings < 4 or most_rings > 65536 or most_rings & (most_rings - 1) ~= 0 then
  error("--rings must be a power of two from 4 to 65536, not " .. most_rings)
end
local most_requests = param("requests", { type = "uint", default = 65536,
  help = "requests followed in flight at once (a power of two, 64-1048576); a request that " ..
         "finds its place taken (5 in one of the table's buckets of 4) takes that of one in " ..
         "flight, and the summary says so" })
if most_requests < 64 or most_requests > 1048576 or most_requests & (most_requests - 1) ~= 0 then
  error("--requests must be a power of two from 64 to 1048576, not " .. most_requests)
end

fxt{ file = "uring.fxt" }
local cat, iouring = "io_uring", require "iouring"
local op, MORE = iouring.op, iouring.CQE_F_MORE
-- C is written as C: c([[ ... ${name} ... ]], values) fills in the names.
local c = require("ctemplate").c

-- Each traced ring (created while tracing, or any with --all_rings), in
-- one of the 4 entries of the bucket its address hashes to (ctx: which
-- ring holds the entry; slot: the entry's index): requests submitted and
-- completions so far (an io_uring_enter tells how many of each happened
-- while it ran), aux: completions that end no request (more follow,
-- IORING_CQE_F_MORE, or posted without one, like MSG_RING's), so that
-- submitted - (completed - aux) are in flight; and its completion queue's
-- head at the last enter (entered: there was one); completions that went
-- through the overflow list, and whether its completion queue came near
-- overflowing (near: from then on its requests are found by user_data
-- too, as the overflow event names no request); sqpoll: an SQ poll thread
-- submits its requests; created: it was claimed when it was created, so
-- its counts are whole (not from a later claim, under --all_rings or
-- after giving way); closed: its process closed it or exited, and
-- seen: its last submission, for who gives way to a new ring. Plain adds:
-- the kernel submits a ring's requests under its uring_lock and posts its
-- completions one at a time (under completion_lock, or uring_lock where
-- the queue is lockless), as its own counters of them need.
-- Arrays rather than hashes: the kernel inlines an array lookup, and every
-- request looks its ring and itself up several times.
local WAYS, RING_ENTRIES = 4, most_rings
local RING_BUCKET_BITS = 0
while WAYS << RING_BUCKET_BITS < RING_ENTRIES do RING_BUCKET_BITS = RING_BUCKET_BITS + 1 end
local rings = map{ name = "rings", type = "array", key = "u32",
                   value = { ctx = "u64", submitted = "u64", completed = "u64", aux = "u64",
                             overflows = "u64", seen = "u64", cq_head = "u32", slot = "u16",
                             entered = "u8", near = "u8", sqpoll = "u8", created = "u8",
                             closed = "u8" },
                   size = RING_ENTRIES }
-- Hashes and flow ids take the low 32 bits of kernel addresses: a tp_btf
-- program may compare and store a typed pointer, but only truncate it.
local function low32(ptr)
  return "mt_addr32((const void *)(__u64)(" .. ptr .. "))"
end
-- C: the first entry of the bucket of KEY, of BUCKET_BITS bits of buckets.
local function first_of_bucket(key, bucket_bits)
  if bucket_bits == 0 then return "0" end
  return c("((__u32)((${low32} * 0x9E3779B97F4A7C15ULL) >> ${shift}) * ${WAYS})",
           { low32 = low32(key), shift = 64 - bucket_bits, WAYS = WAYS })
end
-- C: of the 4 entries (__e) of KEY's bucket (KEY as __q) in array MAP with
-- BUCKET_BITS bits of buckets, the first for which MATCH holds: RESULT,
-- given its pointer __f and index __i; else FALLBACK.
local function bucket_search(map, bucket_bits, key, match, result, fallback)
  local t = { c([[({ __u64 __q = (__u64)(${key}); __u32 __b = ${bucket}, __i = 0;
                   __typeof__(${map}.value) __f = NULL, __e;]],
                { key = key, bucket = first_of_bucket("__q", bucket_bits), map = map }) .. " " }
  for way = 0, WAYS - 1 do
    t[#t + 1] = c([[if (!__f && (__e = map_ptr(${map}, __b + ${way})) && (${match})) {
                      __f = __e; __i = __b + ${way}; }]], { map = map, way = way, match = match }) .. " "
  end
  t[#t + 1] = c("(void)__i; __f ? ${result} : ${fallback}; })", { result = result, fallback = fallback })
  return table.concat(t)
end
local function bucket_entry(map, bucket_bits, key, match, fallback)
  return bucket_search(map, bucket_bits, key, match, "__f", fallback)
end
local NO_ENTRY = "0xffffffffU"
-- C: the state of ring CTX, or NULL when it is not traced.
local function ring_of(ctx)
  return bucket_entry("rings", RING_BUCKET_BITS, ctx, "__q && __e->ctx == __q", "NULL")
end
-- Slots of ring_claims: claims that took the entry of a ring still open.
local EVICTED = 0
local ring_claims = map{ name = "ring_claims", type = "percpu_array", key = "u32", value = "u64",
                         size = 1 }
-- C: claims an entry with fresh state for ring CTX: its own, else a free
-- one, else one of a closed ring, else the one whose ring submitted least
-- recently, counted: if that ring is still in use, its requests from then
-- on are not in the trace, and the summary says so.
local function claim_ring(ctx)
  local function index_where(match)
    return bucket_search("rings", RING_BUCKET_BITS, "__c", match, "__i", NO_ENTRY)
  end
  local t = { c([[({ __u64 __c = (__u64)(${ctx}); __u32 __at = ${own};
    if (__at == ${NO_ENTRY}) __at = ${free};
    if (__at == ${NO_ENTRY}) { __u64 __oldest = ~0ULL; __u32 __b = ${bucket};]],
    { ctx = ctx, own = index_where("__e->ctx == __q"), free = index_where("!__e->ctx || __e->closed"),
      NO_ENTRY = NO_ENTRY, bucket = first_of_bucket("__c", RING_BUCKET_BITS) }) .. " " }
  for way = 0, WAYS - 1 do
    t[#t + 1] = c([[{ __auto_type __e = map_ptr(rings, __b + ${way});
                      if (__e && __e->seen < __oldest) { __oldest = __e->seen; __at = __b + ${way}; } }]],
                  { way = way }) .. " "
  end
  t[#t + 1] = c([[__u64 *__n = map_ptr(ring_claims, ${EVICTED}); if (__n) *__n += 1; }
    __auto_type __s = map_ptr(rings, __at);
    if (__s) *__s = map_val(rings, .ctx = __c, .slot = __at, .seen = nsecs); __s; })]],
                { EVICTED = EVICTED })
  return table.concat(t)
end
-- The processes that own rings.
local owners = map{ name = "owners", key = "u32", value = "u8", size = 4096 }
local enters = map{ name = "enters", type = "percpu_array", key = "u32", value = "u64", size = 11 }
-- Slots of enters: completions through the overflow list; completions
-- left unreaped when their ring was closed or its process exited, and
-- the rings that left some; io_uring_enter calls that woke an SQ poll
-- thread (IORING_ENTER_SQ_WAKEUP) and that waited for room in the
-- submission queue (IORING_ENTER_SQ_WAIT); requests in flight whose entry
-- in `requests` a newer one took; requests that post no completion
-- unless they fail (IOSQE_CQE_SKIP_SUCCESS), and those that failed;
-- io-workers seen (threads of io-wq, named iou-wrk-*).
local OVERFLOWS, UNREAPED, RINGS_UNREAPED, SQ_WAKEUPS, SQ_WAITS, REQUESTS_EVICTED = 2, 3, 4, 5, 6, 7
local REQUESTS_SKIPPING, SKIPPING_FAILED, WORKERS_SEEN = 8, 9, 10
-- C: the completion of entry R's request, which posts none unless it
-- fails: one that ends no counted request.
local function skip_failed(R)
  return c([[if (${R}->skip) { ring->aux += 1;
    __u64 *__f = map_ptr(enters, ${FAILED}); if (__f) *__f += 1; }]], { R = R, FAILED = SKIPPING_FAILED }) .. " "
end
-- The request's IOSQE_CQE_SKIP_SUCCESS, among its flags (REQ_F_CQE_SKIP).
local CQE_SKIP = 1 << 6
-- Every request of a traced ring, in one of the 4 entries of the bucket
-- its address hashes to (req: which request holds the entry; a request
-- address is unique while it is in flight): whether sampling keeps it
-- (keep: 1 kept, 2 dropped, 0 completed: the entry is free; every later
-- hop of a kept request is drawn, and none of a dropped one), and for the
-- summary its opcode, its path (0 inline, 1 poll, 2 io-worker, 3 retried)
-- and when it was submitted. Only a fifth request in flight in one bucket
-- takes the entry of another (--requests entries), counted for the
-- summary: that request's flow then never ends, nor is its latency counted.
local REQUEST_BUCKET_BITS = 0
while WAYS << REQUEST_BUCKET_BITS < most_requests do REQUEST_BUCKET_BITS = REQUEST_BUCKET_BITS + 1 end
local requests = map{ name = "requests", type = "array", key = "u32",
                      value = { req = "u64", submitted = "u64", keep = "u8", opcode = "u8",
                                path = "u8", skip = "u8" }, size = WAYS << REQUEST_BUCKET_BITS }
-- C: the entry of request REQ in flight, or NULL.
local function request_of(req)
  return bucket_entry("requests", REQUEST_BUCKET_BITS, req, "__e->req == __q && __e->keep", "NULL")
end
-- C: an entry for request REQ: its own or a free one; else one of a
-- request that posts no completion unless it fails (which may never free
-- it); else the bucket's first, whose request was still in flight
-- (counted in `enters`).
local function new_request(req)
  local t = { "({ __typeof__(requests.value) __t = NULL, __x; " }
  for way = 0, WAYS - 1 do
    t[#t + 1] = c("if (!__t && (__x = map_ptr(requests, __b + ${way})) && __x->skip) __t = __x; ",
                  { way = way })
  end
  t[#t + 1] = c([[if (!__t) { __u64 *__ev = map_ptr(enters, ${EVICTED}); if (__ev) *__ev += 1;
                    __t = map_ptr(requests, __b); } __t; })]], { EVICTED = REQUESTS_EVICTED })
  return bucket_entry("requests", REQUEST_BUCKET_BITS, req, "__e->req == __q || !__e->keep",
                      table.concat(t))
end
local INLINE, POLL, IO_WORKER, RETRIED = 0, 1, 2, 3
-- A buffered read that finds its pages still being read in does not
-- block: its first issue arms a wait on the page and returns; the page's
-- unlock queues task work that issues it again, and that completes it:
-- the retried path. No event says so, but the request does when it
-- completes, in the member armed for it: from 6.6, where a read's prep
-- clears the kiocb's ki_waitq (shared with dio_complete), the wait queue
-- entry; before, the request's async_data, which only a read that has to
-- wait or go on in pieces allocates (a linked READV has it too). A read
-- that came back short arms the wait too, to read on, and may find the
-- end of its file there at once: one that ended there is taken as
-- inline (so is a retried one that read up to the end of its file).
local function is_read(opcode)
  return ("(%s == %d || %s == %d || %s == %d)"):format(opcode, op.READV, opcode, op.READ_FIXED,
                                                     opcode, op.READ)
end
local function is_rw(opcode)
  return ("(%s || %s == %d || %s == %d || %s == %d)"):format(is_read(opcode), opcode, op.WRITEV,
                                                           opcode, op.WRITE_FIXED, opcode, op.WRITE)
end
local IOCB_DIRECT = "(1 << 17)"
-- A read's kiocb begins its request (the command comes first in it).
local armed_member = has_field("struct kiocb", "dio_complete") and "ki_waitq" or "async_data"
local armed_type = armed_member == "ki_waitq" and "struct kiocb" or "struct io_kiocb"
-- C: whether REQ, of opcode OPCODE, is a read waiting for its pages (or
-- done with them, and so retried).
local function waits_for_pages(req, opcode)
  return c([[(${is_read} && (__u64)((${armed_type} *)(__u64)(${req}))->${armed} &&
              !(((struct kiocb *)(__u64)(${req}))->ki_flags & ${IOCB_DIRECT}))]],
           { is_read = is_read(opcode), req = req, armed = armed_member, armed_type = armed_type,
             IOCB_DIRECT = IOCB_DIRECT })
end
-- C: whether read REQ ended at the end of its file.
local function read_to_the_end(req)
  return c("(((struct kiocb *)(__u64)(${req}))->ki_pos >= " ..
           "((struct kiocb *)(__u64)(${req}))->ki_filp->f_inode->i_size)", { req = req })
end
-- C, where request REQ (its entry r) of opcode OPCODE completes: its
-- local `path`, retried where the request says so (never for direct I/O).
-- Read back from the entry rather than kept from the branch: the verifier
-- then walks what follows once, not once for the constant RETRIED and once
-- for any path (1,800 of io_uring_complete's 6,000 instructions). The
-- entry must still be the request's (keep set): a new request may take it
-- once it is freed.
local function path_at_completion(req, opcode)
  return c([[if (path == ${INLINE} && ${waits} && !${to_the_end}) r->path = ${RETRIED};
             path = *(volatile __u8 *)&r->path; ]],
           { INLINE = INLINE, waits = waits_for_pages(req, opcode), RETRIED = RETRIED,
             to_the_end = read_to_the_end(req) })
end
-- For the summary: requests by (opcode, path, log-linear latency slot),
-- counted per CPU in an array the kernel indexes inline (a hash costs a
-- lookup, and an insert the first time): a row of slots per opcode (0-63,
-- and one row for any above) and path, where LATENCY_SLOTS keeps latencies
-- below 2^50 ns (13 days) exact and longer ones share the last slot; and
-- the rows used, so that the summary reads those only (all of a big array
-- per CPU would delay the exit). One array for all CPUs, added to
-- atomically: the kernel allocates each value of a per-CPU array apart, and
-- 99,840 of them took 65 ms to create. Then io_uring_enter calls and the
-- requests they submitted, io-worker threads.
local LATENCY_SLOTS, OTHER_OPCODES, PATHS = 384, 64, 4
local ROWS = (OTHER_OPCODES + 1) * PATHS
local latencies = map{ name = "latencies", type = "array", key = "u32", value = "u64",
                       size = ROWS * LATENCY_SLOTS }
local latency_rows = map{ name = "latency_rows", type = "array", key = "u32", value = "u8",
                          size = ROWS }
-- C: counts a request of OPCODE and PATH that took NS.
local function count_latency(opcode, path, ns)
  return c([[{
    __u32 __o = ${opcode}, __s = mt_log_linear_slot(${ns}),
      __row = (__o < ${OTHER} ? __o : ${OTHER}) * ${PATHS} + (${path});
    __u8 *__used = map_ptr(latency_rows, __row); if (__used && !*__used) *__used = 1;
    __u64 *__n = map_ptr(latencies, __row * ${SLOTS} + (__s < ${LAST} ? __s : ${LAST}));
    if (__n) __sync_fetch_and_add(__n, 1); }]], { opcode = opcode, ns = ns, OTHER = OTHER_OPCODES, PATHS = PATHS,
                                path = path, SLOTS = LATENCY_SLOTS, LAST = LATENCY_SLOTS - 1 })
end
-- When the application reaps a completion (moves the completion queue's
-- head past it, in its own memory), for the summary, for one completion
-- in 8 (by its place in the queue: the cost stays off most requests): the
-- time of each ring's last 8 such completions, and at each io_uring_enter
-- (where the kernel sees the head moved), how long each of them reaped
-- since the last one had waited, counted in log-linear slots like
-- latencies.
local REAP_EVERY, REAP_KEPT = 8, 8
local completion_times = map{ name = "completion_times", type = "array", key = "u32",
                              value = "u64", size = RING_ENTRIES * REAP_KEPT }
local reap_times = map{ name = "reap_times", type = "percpu_array", key = "u32", value = "u64",
                        size = LATENCY_SLOTS }
-- When an io thread drew its first event since it last came on a CPU: a
-- completion of a request punted to io-wq on an io-worker, a submission
-- on an SQ poll thread. Its running slice holds it, and begins before the
-- event's 1-ns slice (see sched_switch).
local stint_first = map{ name = "stint_first", type = "lru_hash", key = "u32", value = "u64",
                         size = 4096 }
-- Up to 4 rings of each process, their fds (-1: registered only) and the
-- entries of their states in `rings`, to find what they left unreaped
-- when it exits, and to forget its fds when it is gone; main_left: its
-- main thread's exit drew them.
local process_rings = map{ name = "process_rings", key = "u32",
                           value = { a = "u64", b = "u64", c = "u64", d = "u64", fd_a = "s32",
                                     fd_b = "s32", fd_c = "s32", fd_d = "s32", slot_a = "u16",
                                     slot_b = "u16", slot_c = "u16", slot_d = "u16",
                                     main_left = "u32" },
                           size = 4096 }
local RING_FIELDS = { "a", "b", "c", "d" }
-- Each ring's fd in its process. LRU: the fds of a process's rings past
-- its first four are not forgotten with it.
local ring_of_fd = map{ name = "ring_of_fd", type = "lru_hash", key = { pid = "u32", fd = "s32" },
                        value = "u64", size = 4096 }
-- Requests by (ring, user_data), for two uses kept apart by the ring's
-- address, taken as it is (NEAR) or plus one (MULTISHOT; it is even):
-- - requests, kept or not, of rings whose completion queue came near
--   overflowing (NEAR): a completion that finds the queue full goes to the
--   overflow list, and its event names only ring and user_data;
-- - kept multishot requests (MULTISHOT): their completions after the
--   first come without a request pointer (req is 0), only their user_data.
-- One map for both, which share its entries: an LRU map of this size takes
-- 2 ms to make at start.
local by_user_data = map{ name = "by_user_data", type = "lru_hash",
                          key = { ring = "u64", user_data = "u64" }, value = "u64", size = 65536 }
local NEAR, MULTISHOT = 0, 1

-- Opcodes by name (the kernel's enum io_uring_op, from the iouring
-- module), for the trace and the summary: the trace's records carry the
-- number and the sink writes the name.
local names = { op = iouring.op_names }

-- The events every request fires (submit, file_get, complete) are taken
-- with tp_btf where the kernel passes what the trace needs, reading the
-- request and completion in place: a classic tracepoint first builds its
-- whole record (copying the opcode's name) for each. Elsewhere (Debian's
-- 6.1 names submit io_uring_submit_sqe and passes completions' fields one
-- by one) the tracepoints. The C each event's values are read with:
local classic = { ctx = "args.ctx", req = "args.req", user_data = "args.user_data",
                  opcode = "args.opcode", flags = "args.flags",
                  res = "args.res", cflags = "args.cflags", fd = "args.fd" }
local function has(list, name)
  for _, n in ipairs(list or {}) do
    if n == name then return true end
  end
  return false
end
local submit_at = { "tracepoint:io_uring:io_uring_submit_req", "tracepoint:io_uring:io_uring_submit_sqe" }
local complete_at, file_get_at = "tracepoint:io_uring:io_uring_complete", "tracepoint:io_uring:io_uring_file_get"
local S, C, F = classic, classic, classic
if has(arguments("tp_btf:io_uring_submit_req"), "req") and has(arguments("tp_btf:io_uring_complete"), "cqe") then
  submit_at, complete_at = "tp_btf:io_uring_submit_req", "tp_btf:io_uring_complete"
  S = { ctx = "args.req->ctx", req = "args.req", user_data = "args.req->cqe.user_data",
        opcode = "args.req->opcode", flags = "(__u64)args.req->flags" }
  C = { ctx = "args.ctx", req = "args.req", user_data = "args.cqe->user_data", res = "args.cqe->res",
        cflags = "args.cqe->flags" }
  if has(arguments("tp_btf:io_uring_file_get"), "req") then
    file_get_at = "tp_btf:io_uring_file_get"
    F = { ctx = "args.req->ctx", req = "args.req", fd = "args.fd" }
  end
end

local ring_traced = "(param.all_rings || " .. ring_of("args.ctx") .. ")"
-- `ring`, the traced ring's state, or the event is dropped; a ring claimed
-- here (--all-rings) has its SQ poll thread read from the kernel's.
local function ring_state(A)
  return c([[
    __auto_type ring = ${ring}; if (!ring) {
      if (!param.all_rings) return 0; ring = ${claim}; if (!ring) return 0;
      ring->sqpoll = !!(((struct io_ring_ctx *)(${ctx}))->flags & ${SQPOLL}); }]],
           { ring = ring_of(A.ctx), claim = claim_ring(A.ctx), ctx = A.ctx,
             SQPOLL = iouring.SETUP_SQPOLL })
end
local function kept(req)
  return c("({ __auto_type __k = ${entry}; __k && __k->keep == 1; })", { entry = request_of(req) })
end
local is_kept = kept("args.req")
-- A request's flow: its address and its ring's, 32 bits of each.
local function flow_of(A)
  return "(" .. low32(A.req) .. " | " .. low32(A.ctx) .. " << 32)"
end
local flow_id = flow_of(classic)
-- C: the key of A's request in by_user_data, for USE (NEAR or MULTISHOT).
local function by_user_data_key(A, use)
  return "map_key(by_user_data, (__u64)" .. A.ctx .. " + " .. use .. ", " .. A.user_data .. ")"
end
-- Opcodes whose requests may complete more than once (IORING_CQE_F_MORE):
-- multishot poll, accept, recv, recvmsg and read, timeouts, zero-copy
-- sends' notifications, uring_cmd. Only those are found by user_data.
local function multishot(opcode)
  local mask = 0
  for _, name in ipairs({ "POLL_ADD", "RECVMSG", "TIMEOUT", "ACCEPT", "RECV", "URING_CMD",
                          "READ_MULTISHOT" }) do
    mask = mask | 1 << op[name]
  end
  return ("(%s < 64 && (0x%xULL >> %s & 1))"):format(opcode, mask, opcode)
end
-- Zero-copy sends (SEND_ZC, SENDMSG_ZC) complete twice: their result, with
-- more to follow, then a notification once the kernel let go of the
-- buffer (IORING_CQE_F_NOTIF), which the kernel posts from a request of
-- its own, the send's being freed at its result. So the result ends the
-- send (its address may then be a new request's), and the notification
-- ends none.
local function zero_copy(opcode)
  return ("(%s == %d || %s == %d)"):format(opcode, op.SEND_ZC, opcode, op.SENDMSG_ZC)
end
-- C: whether the completions waiting in ring CTX's queue and its requests
-- in flight (this one included) are more than the queue holds.
local function cq_may_overflow(ctx)
  return c([[((__u32)(${x}->cached_cq_tail - ${x}->rings->cq.head) +
             (ring->submitted - ring->completed + ring->aux) > ${x}->cq_entries)]],
           { x = "((struct io_ring_ctx *)(" .. ctx .. "))" })
end
-- C: where WHEN holds, notes the time of the thread's first event since
-- it last came on a CPU (an io thread's running slice holds it; see
-- sched_switch below).
local function first_in_stint(when)
  return c("if (${when} && !map_has(stint_first, tid)) map_set(stint_first, tid, nsecs);",
           { when = when }) .. " "
end
-- Where a request is first seen (after ring_state): counted, indexed by
-- user_data once its ring came near overflowing, kept (1) or dropped (2),
-- remembered, and left undrawn when dropped.
local function decide(A)
  -- Keyed by the ring's address as its state keeps it: a load from a map,
  -- not from the request (in a macro's argument, which stays a pointer the
  -- verifier checks by scans of the kernel's BTF: mt_helpers.h, __mt_walk).
  -- A request that posts no completion unless it fails is not counted in
  -- flight: its failure's completion is one that ends no counted request.
  local R = { ctx = "ring->ctx", user_data = A.user_data }
  return c([[
    __u8 skip = !!(${flags} & ${CQE_SKIP}); if (!skip) ring->submitted += 1; else {
      __u64 *__s = map_ptr(enters, ${SKIPPING}); if (__s) *__s += 1; }
    ring->seen = nsecs; ${first_in_stint}
    if (!ring->near && ${may_overflow}) ring->near = 1;
    if (ring->near) map_set(by_user_data, ${near_key}, (__u64)${req});
    __u8 keep = param.sample >= 100 || bpf_get_prandom_u32() % 100 < param.sample ? 1 : 2;
    __u8 opcode = ${opcode};
    __auto_type entry = ${entry};
    if (entry) *entry = map_val(requests, .req = (__u64)${req}, .keep = keep,
                                .opcode = opcode, .path = opcode == ${POLL_ADD} ? 1 : 0,
                                .submitted = nsecs, .skip = skip);
    if (keep != 1) return 0;
    if (${multishot}) map_set(by_user_data, ${key}, (__u64)${req});]],
    { flags = A.flags, CQE_SKIP = CQE_SKIP, SKIPPING = REQUESTS_SKIPPING,
      first_in_stint = first_in_stint("ring->sqpoll"), may_overflow = cq_may_overflow(A.ctx),
      near_key = by_user_data_key(R, NEAR), req = A.req, opcode = A.opcode,
      entry = new_request(A.req), POLL_ADD = op.POLL_ADD, multishot = multishot("opcode"),
      key = by_user_data_key(R, MULTISHOT) })
end

-- C: puts ring CTX, with its FD and the SLOT of its state, in the first
-- free field of process_rings entry P.
local function remember_ring(P, ctx, fd, slot)
  local t = {}
  for i, f in ipairs(RING_FIELDS) do
    t[#t + 1] = c([[${else_}if (!${P}->${f}) {
                      ${P}->${f} = (__u64)(${ctx}); ${P}->fd_${f} = ${fd}; ${P}->slot_${f} = ${slot}; }]],
                  { else_ = i > 1 and "else " or "", P = P, f = f, ctx = ctx, fd = fd, slot = slot }) .. " "
  end
  return table.concat(t)
end
probe("tracepoint:io_uring:io_uring_create", {
  action = c([[
    __auto_type claimed = ${claim};
    if (claimed) { claimed->sqpoll = !!(args.flags & ${SQPOLL}); claimed->created = 1; }
    map_set(owners, pid, 1);
    if (!(args.flags & ${FD_ONLY}))  /* else args.fd is its registered index */
      map_set(ring_of_fd, map_key(ring_of_fd, pid, args.fd), (__u64)args.ctx);
    __auto_type rings_of = map_ptr(process_rings, pid); if (!rings_of) {
      map_set(process_rings, pid, map_val(process_rings, .a = 0));
      rings_of = map_ptr(process_rings, pid); } if (rings_of) { ${remember}}]],
    { claim = claim_ring("args.ctx"), SQPOLL = iouring.SETUP_SQPOLL,
      FD_ONLY = iouring.SETUP_REGISTERED_FD_ONLY,
      remember = remember_ring("rings_of", "args.ctx",
                               "(args.flags & " .. iouring.SETUP_REGISTERED_FD_ONLY ..
                                 ") ? -1 : (__s32)args.fd", "(claimed ? claimed->slot : 0)") }),
  draw = { kind = "slice", name = "create", category = cat,
           args = { "args.fd", ring = "args.ctx", "args.sq_entries", "args.cq_entries", "args.flags",
                    sq_thread = "(bool)(args.flags & " .. iouring.SETUP_SQPOLL .. ")" } },
})

-- Submission decides whether the request is kept; the flow begins here.
probe(submit_at, {
  action = ring_state(S) .. decide(S),
  draw = { kind = "slice", name = "submit", category = cat, names = names,
           args = { user_data = S.user_data, op = S.opcode, flags = S.flags, ring = S.ctx,
                    req = S.req },
           flow = { id = flow_of(S), point = "begin" } },
})

-- A hop of a kept request: a short slice holding a flow step, with what
-- is its own (the request's user_data, opcode, ring and address are on its
-- submit, where the flow leads). A hop that tells the request's path
-- records it, kept or not. AT and A: the probe and how its values are
-- read, when not the tracepoint.
local function hop(event, fields, path, at, A)
  A = A or classic
  probe(at or "tracepoint:io_uring:io_uring_" .. event, {
    filter = not path and kept(A.req) or nil,
    action = path and c([[__auto_type r = ${entry}; if (!r) return 0;
                          r->path = ${path}; if (r->keep != 1) return 0;]],
                        { entry = request_of(A.req), path = path }),
    draw = { kind = "slice", name = event, category = cat, args = fields,
             names = fields.op and names, flow = { id = flow_of(A), point = "step" } },
  })
end
hop("file_get", { fd = F.fd }, nil, file_get_at, F)
hop("queue_async_work", { "args.flags", "args.rw" }, IO_WORKER)
hop("poll_arm", { "args.mask", "args.events" }, POLL)
hop("task_add", { "args.mask" })
hop("defer", {})
hop("link", { target = "args.target_req" })

-- Linked requests (IOSQE_IO_LINK, IO_HARDLINK): a flow from each request's
-- completion to the next one's, in chain order. The link event names the
-- new request (req) and the one before it (target_req); both must be kept.
-- By (ring, request), each kept request's next one (its address: even),
-- plus 1 if one comes before it; one entry per request.
local chains = map{ name = "chains", type = "lru_hash", key = { ring = "u64", req = "u64" },
                    value = "u64", size = 65536 }
local function chain_key(req)
  return "map_key(chains, (__u64)args.ctx, (__u64)" .. req .. ")"
end
-- Keeps chain flows apart from request flows: in both halves, as the
-- table of flows to follow elsewhere (-p/-c) takes the low half for its
-- slot, where a chain flow took its request's. Odd, so never the low half
-- of a request's (an aligned address).
local chain_salt = "0x6c696e6b6c696e6bULL"
-- Whether any link was seen: until then completions skip `chains`.
local linked = map{ name = "linked", type = "array", key = "u32", value = "u8", size = 1 }
probe("tracepoint:io_uring:io_uring_link", {
  filter = is_kept .. " && " .. kept("args.target_req"),
  action = c([[
    map_set(linked, 0, 1);
    __u64 *before = map_ptr(chains, ${before});
    if (before) *before = (*before & 1) | (__u64)args.req;
    else map_set(chains, ${before}, (__u64)args.req);
    __u64 *after = map_ptr(chains, ${after});
    if (after) *after |= 1; else map_set(chains, ${after}, 1);]],
    { before = chain_key("args.target_req"), after = chain_key("args.req") }),
})
-- A request's completion begins the flow to its next one, then ends the
-- one from the request before it; the last of the two frees its entry.
local completes_chained = c("map_get(linked, 0) && !(${cflags} & ${MORE}) && (map_get(chains, ${key})",
                            { cflags = C.cflags, MORE = MORE, key = chain_key("args.req") })
probe(complete_at, {
  filter = completes_chained .. " & ~1ULL)",
  action = c([[__u64 chained = map_get(chains, ${key}), next = chained & ~1ULL;
               if (!(chained & 1)) map_del(chains, ${key});]], { key = chain_key("args.req") }),
  draw = { kind = "slice", name = "link_next", category = cat .. "_link", args = { user_data = C.user_data },
           flow = { id = "(" .. flow_of({ req = "next", ctx = "args.ctx" }) .. " ^ " .. chain_salt .. ")",
                    point = "begin" } },
})
probe(complete_at, {
  filter = completes_chained .. " & 1)",
  action = c("map_del(chains, ${key});", { key = chain_key("args.req") }),
  draw = { kind = "slice", name = "link_prev", category = cat .. "_link", args = { user_data = C.user_data },
           flow = { id = "(" .. flow_id .. " ^ " .. chain_salt .. ")", point = "end" } },
})

-- A cancelled link: the event names the failed head (req, user_data) and
-- the cancelled request (link), which is the one whose flow it joins.
probe("tracepoint:io_uring:io_uring_fail_link", {
  filter = kept("args.link"),
  draw = { kind = "slice", name = "fail_link", category = cat, names = names,
           args = { "args.user_data", "args.opcode", req = "args.req", link = "args.link",
                    op = "args.opcode" },
           flow = { id = flow_of({ req = "args.link", ctx = "args.ctx" }), point = "step" } },
})

-- A failing request that skips its completion has the kernel skip those
-- of the requests linked after it, which it fails (io_fail_links sets
-- REQ_F_CQE_SKIP on each before this event): they post none either.
probe("tracepoint:io_uring:io_uring_fail_link", {
  filter = c("((struct io_kiocb *)args.link)->flags & ${CQE_SKIP}", { CQE_SKIP = CQE_SKIP }),
  action = c([[
    __auto_type ring = ${ring}; __auto_type r = ${entry};
    if (ring && r && !r->skip) { r->skip = 1; ring->submitted -= 1;
      __u64 *__s = map_ptr(enters, ${SKIPPING}); if (__s) *__s += 1; }]],
    { ring = ring_of("args.ctx"), entry = request_of("args.link"), SKIPPING = REQUESTS_SKIPPING }),
})

-- A request the kernel rejects before submitting it: its flow begins here
-- (or steps, where it was submitted).
local failed_args = { "args.user_data", "args.opcode", "args.flags", "args.off", "args.addr",
                      "args.len", "args.error", op = "args.opcode", req = "args.req" }
probe("tracepoint:io_uring:io_uring_req_failed", {
  filter = is_kept,
  draw = { kind = "slice", name = "req_failed", category = cat, args = failed_args, names = names,
           flow = { id = flow_id, point = "step" } },
})
probe("tracepoint:io_uring:io_uring_req_failed", {
  filter = "!" .. request_of("args.req"),
  action = ring_state(classic) .. decide(classic),
  draw = { kind = "slice", name = "req_failed", category = cat, args = failed_args, names = names,
           flow = { id = flow_id, point = "begin" } },
})

-- Kernels that trace a completion before finding room for it in the
-- queue (6.1's, which passes the completion's fields, not its entry) fire
-- io_uring_complete for an overflowed one too, just before
-- io_uring_cqe_overflow on the same CPU: the last completion is kept, so
-- that the overflow does not count or end it twice.
local traced_before_room = C == classic
local last_cqe = map{ name = "last_cqe", type = "percpu_array", key = "u32",
                      value = { ring = "u64", user_data = "u64" }, size = 1 }
local last_completion = traced_before_room and
  c([[{ __auto_type __l = map_ptr(last_cqe, 0); if (__l) { __l->ring = (__u64)args.ctx;
        __l->user_data = ${user_data}; } }]], { user_data = C.user_data }) .. " " or ""

-- C: counts a completion on the ring of state `ring`, one in REAP_EVERY
-- stamped with its time.
local function count_completion()
  return c([[
    if (!(ring->completed % ${EVERY})) {
      __u64 *__at = map_ptr(completion_times,
                            ring->slot * ${KEPT} + ring->completed / ${EVERY} % ${KEPT});
      if (__at) *__at = nsecs; }
    ring->completed += 1;]], { EVERY = REAP_EVERY, KEPT = REAP_KEPT }) .. " "
end

-- Every completion of a traced ring is counted, sampled or not. The last
-- one of a request ends it, counted for the summary, and its flow, unless
-- more completions follow (multishot: IORING_CQE_F_MORE), which are steps,
-- found by user_data when the kernel gives no request pointer (a
-- zero-copy send's result ends it, and its notification nothing). A
-- completion carries only its result and flags: the rest is on the submit.
probe(complete_at, {
  action = c([[
    __auto_type ring = ${ring}; if (!ring) return 0;
    ${count_completion}${last_completion}if ((${cflags} & ${NOTIF}) || !args.req) {
      ring->aux += 1; return 0; }
    __auto_type r = ${entry};
    if ((${cflags} & ${MORE}) && !(r && ${zero_copy})) { ring->aux += 1; return 0; }
    if (!r) return 0; ${skip_failed}
    __u8 keep = r->keep, path = r->path, r_opcode = r->opcode;
    ${path_at_completion}${count_latency}r->keep = 0;
    if (${multishot}) map_del(by_user_data, ${key});
    if (ring->near) map_del(by_user_data, ${near_key});
    if (keep != 1) return 0; ${first_in_stint}]],
    { ring = ring_of("args.ctx"), count_completion = count_completion(),
      last_completion = last_completion, cflags = C.cflags, MORE = MORE, NOTIF = iouring.CQE_F_NOTIF,
      zero_copy = zero_copy("r->opcode"), skip_failed = skip_failed("r"),
      entry = request_of("args.req"),
      path_at_completion = path_at_completion("args.req", "r_opcode"),
      count_latency = count_latency("r_opcode", "path", "nsecs - r->submitted"),
      multishot = multishot("r_opcode"), key = by_user_data_key(C, MULTISHOT),
      near_key = by_user_data_key(C, NEAR),
      first_in_stint = first_in_stint("path == " .. IO_WORKER) }) .. " ",
  draw = { kind = "slice", name = "complete", category = cat, args = { res = C.res, cflags = C.cflags },
           flow = { id = flow_id, point = "end" } },
})
local more_req = c("(args.req ? (__u64)args.req : map_get(by_user_data, ${key}))",
                   { key = by_user_data_key(C, MULTISHOT) })
probe(complete_at, {
  filter = c("(${cflags} & ${MORE}) && map_has(by_user_data, ${key})",
             { cflags = C.cflags, MORE = MORE, key = by_user_data_key(C, MULTISHOT) }),
  draw = { kind = "slice", name = "complete", category = cat, args = { res = C.res, cflags = C.cflags },
           flow = { id = flow_of({ req = more_req, ctx = "args.ctx" }), point = "step" } },
})

-- A completion that found the completion queue full goes to the overflow
-- list, and on to the queue once the application makes room. Where the
-- kernel fires no io_uring_complete for it, this ends its request (found
-- by ring and user_data: its ring came near overflowing when it was
-- submitted), counted as a completion; everywhere it is an `overflow` mark
-- on the ring's track, with the ring's count of them so far.
local overflow_key = by_user_data_key({ ctx = "args.ctx", user_data = "args.user_data" }, NEAR)
local overflow_multishot_key = by_user_data_key({ ctx = "args.ctx", user_data = "args.user_data" },
                                                MULTISHOT)
-- Where the kernel also fired io_uring_complete for it, the completion
-- was counted there: only one not seen there is counted here.
local not_counted_yet = traced_before_room and
  c([[__auto_type last = map_ptr(last_cqe, 0);
      if (!last || last->ring != (__u64)args.ctx || last->user_data != args.user_data) {]]) .. " "
  or "{ "
probe("tracepoint:io_uring:io_uring_cqe_overflow", {
  action = c([[
    __auto_type ring = ${ring}; if (!ring) return 0;
    ring->overflows += 1; __u64 overflows = ring->overflows, req = 0; bool ends = 0;
    __u64 *total = map_ptr(enters, ${OVERFLOWS}); if (total) *total += 1;
    ${not_counted_yet}${count_completion}if (args.cflags & ${MORE}) ring->aux += 1; else {
      req = map_get(by_user_data, ${key});
      if (!req) req = map_get(by_user_data, ${multishot_key});
      __auto_type r = req ? ${entry} : NULL; if (r) {
        ${skip_failed}
        __u8 path = r->path, r_opcode = r->opcode; ends = r->keep == 1;
        ${path_at_completion}${count_latency}r->keep = 0;
        map_del(by_user_data, ${key});
        map_del(by_user_data, ${multishot_key}); } } }]],
    { ring = ring_of("args.ctx"), OVERFLOWS = OVERFLOWS, not_counted_yet = not_counted_yet,
      count_completion = count_completion(), MORE = MORE, key = overflow_key,
      multishot_key = overflow_multishot_key, entry = request_of("req"), skip_failed = skip_failed("r"),
      path_at_completion = path_at_completion("req", "r_opcode"),
      count_latency = count_latency("r_opcode", "path", "nsecs - r->submitted") }),
  draw = {
    { kind = "slice", name = "complete", category = cat, when = "ends",
      args = { res = "args.res", cflags = "args.cflags", overflowed = "(bool)1" },
      flow = { id = flow_of({ req = "req", ctx = "args.ctx" }), point = "end" } },
    { kind = "instant", name = "overflow", category = cat,
      track = { id = "(__u64)args.ctx", name = "ring" },
      args = { user_data = "args.user_data", res = "args.res", overflows = "(__u64)overflows" } },
  },
})

-- Where the kernel lets a probe see which request an io-worker runs
-- (fentry, or a kprobe, on io_issue_sqe, which a worker calls for each
-- request it runs), an `issue` slice per request on the worker's track,
-- in the request's flow.
local issue_at = available({ "fentry:io_issue_sqe", "kprobe:io_issue_sqe" })
local on_io_worker = "(comm[0] == 'i' && comm[1] == 'o' && comm[2] == 'u' && comm[3] == '-' " ..
                     "&& comm[4] == 'w')"  -- iou-wrk-*
if issue_at then
  latency{ name = "issue", start = issue_at,
           stop = (issue_at:gsub("^fentry:", "fexit:"):gsub("^kprobe:", "kretprobe:")),
           key = "tid", filter = on_io_worker .. " && " .. kept("args.req"),
           carry = { req = "(__u64)args.req", ctx = "(__u64)args.req->ctx" },
           draw = { { kind = "slice", name = "issue", category = cat, duration = "latency",
                      flow = { id = flow_of({ req = "start.req", ctx = "start.ctx" }),
                               point = "step" } } } }
end
-- Elsewhere (no kprobes, no fentry), the kernel's io threads of a traced
-- process (PF_IO_WORKER tasks: the io-wq workers, iou-wrk-*, and SQ poll
-- threads, iou-sqp-*) have a `running` slice on their track for each stint
-- on a CPU, drawn as it leaves the CPU, in its own context (sched_switch).
-- The stint began when the scheduler last let it arrive (sched_info's
-- last_arrival, on the run queue's clock, which is read again just
-- before; its runtime would leave out the time stolen by the hypervisor
-- and spent in interrupts), or where the clock was not read again, when
-- the thread posted its first completion since (stint_first): never after
-- what it holds, never before the last stint ended. Which request a
-- worker runs is not said there: under DEFER_TASKRUN its completions are
-- posted by the submitting thread, so its track shows when it worked, and
-- a request's flow passes through it only where the worker itself posts
-- the completion. (Not with the issue slices: a request may sleep in the
-- middle of one, and slices that cross are dropped.) Everywhere, a counter
-- of each process's io-workers, as they come and go.
local PF_IO_WORKER, PF_EXITING = "0x10", "0x4"
local stint_ends = map{ name = "stint_ends", key = "u32", value = "u64", size = 4096 }
local live_workers = map{ name = "live_workers", key = "u32", value = "s64", size = 4096 }
local alive = map{ name = "alive", key = "u32", value = "u8", size = 4096 }  -- io-workers counted in
-- The most io-workers one process ran at once, shifted 32 bits left, and
-- that process: one word, written whole, for the summary.
local busiest = map{ name = "busiest", type = "array", key = "u32", value = "u64", size = 1 }
local io_task = "(args.prev->flags & " .. PF_IO_WORKER .. ")"
local is_worker = "(args.prev->comm[4] == 'w')"  -- iou-wrk-*, not iou-sqp-*
local owner_traced = "(param.all_rings || map_has(owners, pid))"
-- C: the process's io-worker count, after ADD; drawn where `count` is set.
local function count_workers(add)
  return c([[
    __s64 *__n = map_ptr(live_workers, pid); if (!__n) { map_set(live_workers, pid, 0);
      __n = map_ptr(live_workers, pid); }
    if (__n) { *__n += ${add}; count = *__n; }]], { add = add }) .. " " ..
         (add > 0 and [[__u64 *__most = map_ptr(busiest, 0);
                        if (__most && (__s64)(*__most >> 32) < count) *__most = (__u64)count << 32 | pid;]]
                   or "")
end
local workers_counter = { kind = "counter", name = "io-workers", category = cat,
                          args = { io_workers = "(__s64)count" }, when = "count >= 0" }
probe("tp_btf:sched_switch", {
  filter = io_task .. " && " .. owner_traced,
  action = c([[
    __u64 ran = args.prev->se.cfs_rq->rq->clock - args.prev->sched_info.last_arrival;
    __u64 begin = nsecs - ran, *last = map_ptr(stint_ends, tid), *first = map_ptr(stint_first, tid);
    if (first) { if (*first - 2 < begin) begin = *first - 2; map_del(stint_first, tid); }
    if (last && begin < *last) begin = *last; if (begin > nsecs) begin = nsecs;
    __s64 count = -1;
    /* An exiting worker left the count at its exit, before its last switch. */
    if (args.prev->flags & ${PF_EXITING}) map_del(stint_ends, tid);
    else { map_set(stint_ends, tid, nsecs);
      if (${is_worker} && !map_has(alive, tid)) { map_set(alive, tid, 1);
        __u64 *__seen = map_ptr(enters, ${WORKERS_SEEN}); if (__seen) *__seen += 1;
        ${count_workers} } }]],
    { is_worker = is_worker, count_workers = count_workers(1), PF_EXITING = PF_EXITING,
      WORKERS_SEEN = WORKERS_SEEN }),
  draw = {
    workers_counter,
    not issue_at and
      { kind = "slice", name = "running", category = cat, duration = "(__u64)(nsecs - begin)" } or nil,
  },
})
-- An io-worker that exits leaves the count.
probe("tracepoint:sched:sched_process_exit", {
  filter = "map_has(alive, tid) && " .. owner_traced,
  action = c([[
    map_del(alive, tid); map_del(stint_ends, tid); map_del(stint_first, tid);
    __s64 count = -1; ${count_workers}]], { count_workers = count_workers(-1) }),
  draw = workers_counter,
})

-- Ring events without a request.
local function instant(event, fields)
  probe("tracepoint:io_uring:io_uring_" .. event, {
    -- task_work_run has no ring; SQ poll threads run it empty on every loop.
    filter = event == "task_work_run" and "args.count > 0" or ring_traced,
    draw = { kind = "instant", name = event, category = cat, args = fields },
  })
end
instant("register", { "args.opcode", "args.nr_files", "args.nr_bufs", "args.ret" })
instant("short_write", { "args.fpos", "args.wanted", "args.got" })
instant("task_work_run", { "args.count" })
instant("local_work_run", { "args.count", "args.loops" })
instant("cqring_wait", { "args.min_events" })

-- The syscalls, as slices on the calling thread holding the hops inside:
-- timed from entry to exit, arguments carried from the entry. Returns the
-- latency pair, to declare with latency().
local function syscall(name, fields, more_carry, more_args)
  local args, carry = more_args or {}, more_carry or {}
  args.ret = "args.ret"
  for _, field in ipairs(fields) do
    args[field] = "start." .. field
    carry[field] = "args." .. field
  end
  local pair = {
    name = name,
    start = "tracepoint:syscalls:sys_enter_" .. name,
    stop = "tracepoint:syscalls:sys_exit_" .. name,
    key = "tid",
    carry = carry,
    stop_filter = "param.all_rings || map_has(owners, pid)",
    draw = { { kind = "slice", name = name, category = cat, duration = "latency", args = args } },
  }
  return pair
end
latency(syscall("io_uring_setup", { "entries" }))
latency(syscall("io_uring_register", { "fd", "opcode", "nr_args" }))

-- io_uring_enter, in one program at entry and one at exit. A traced ring's
-- track, under its process, has counters of requests in flight and of the
-- submission and completion queues' occupancy (tail - head of the ring the
-- application shares with the kernel, read through BTF) when the call
-- begins and ends. The application reaps completions by moving the
-- completion queue's head, in its own memory: seen at its next enter, as a
-- "reaped" mark of how many since the one before. With --all_rings, a ring
-- created before tracing has its enter slices, and no counters.
local function queues(ring)
  -- Plain loads where the engine has them (MT_DIRECT_LOADS), which needs
  -- the pointer followed in the same expression; else a probe read of the
  -- pointer, and of each field.
  local read = c([[
    __u32 sq_head = 0, sq_tail = 0, cq_head = 0, cq_tail = 0; if (state && MT_DIRECT_LOADS) {
      struct io_ring_ctx *x = (struct io_ring_ctx *)${ring};
      sq_head = x->rings->sq.head; sq_tail = x->rings->sq.tail;
      cq_head = x->rings->cq.head; cq_tail = x->rings->cq.tail;
    } else if (state) {
      struct io_rings *shared = ((struct io_ring_ctx *)${ring})->rings;
      sq_head = shared->sq.head; sq_tail = shared->sq.tail;
      cq_head = shared->cq.head; cq_tail = shared->cq.tail; }]],
    { ring = ring }) .. " "
  local draw = { kind = "counter", name = "queues", category = cat, track = { id = ring, name = "ring" },
                 args = { in_flight = "state ? (__s64)(state->submitted - state->completed + " ..
                                      "state->aux) : 0",
                          sq = "(__u32)(sq_tail - sq_head)",
                          cq = "(__u32)(cq_tail - cq_head)" }, when = "state" }
  return read, draw
end
-- C: how long each stamped completion of the ring of state S reaped since
-- the last enter (from S->cq_head to cq_head) waited, of its last ones. An
-- mt_for loop: unrolled, it was a fifth of what the verifier checks. Most
-- enters reap no stamped completion (one in REAP_EVERY is): they skip the
-- loop, and its iterator's kfunc calls, at the first index's test.
local function time_reaping(S)
  return c([[
    __u32 __slot = ${S}->slot, __done = (__u32)${S}->completed,
      __from = reaped > ${span} ? cq_head - ${span} : ${S}->cq_head;
    __from = (__from + ${every_less_1}) / ${EVERY} * ${EVERY};
    if ((__s32)(__from - cq_head) < 0) mt_for(__i, 0, ${KEPT}) { __u32 __idx = __from + __i * ${EVERY};
      if ((__s32)(__idx - cq_head) >= 0) break; if (__done - __idx - 1 >= ${span}) continue;
      __u64 *__at = map_ptr(completion_times, __slot * ${KEPT} + __idx / ${EVERY} % ${KEPT});
      if (!__at || !*__at || *__at > nsecs) continue;
      __u32 __s = mt_log_linear_slot(nsecs - *__at);
      __u64 *__n = map_ptr(reap_times, __s < ${SLOTS} ? __s : ${LAST}); if (__n) *__n += 1; }]],
    { S = S, span = REAP_EVERY * REAP_KEPT, every_less_1 = REAP_EVERY - 1,
      EVERY = REAP_EVERY, KEPT = REAP_KEPT, SLOTS = LATENCY_SLOTS, LAST = LATENCY_SLOTS - 1 }) .. " "
end
-- What the ring's requests did during the call, from its state however
-- late it was claimed (a ring of --all_rings is claimed at its first
-- request seen), and 0 where its state went during the call (its entry
-- taken by another ring). Read into numbers as soon as the ring is found:
-- `seen` kept to the end made the verifier check the rest of each program
-- once more.
local enter = syscall("io_uring_enter", { "fd", "to_submit", "min_complete", "flags" },
                      { ring = "(__u64)ring", submitted = "(__u64)submitted",
                        completed = "(__u64)completed" },
                      { submitted = "(__u32)(submitted > start.submitted ? submitted - start.submitted : 0)",
                        completed = "(__u32)(completed > start.completed ? completed - start.completed : 0)" })
enter.stop_filter = nil  -- a call has a stop only where its start was kept
local read_entry, queues_at_entry = queues("ring")
-- The ring an enter names: by its fd in the process, or, when the
-- application registered the ring's fd (io_uring_register_ring_fd), by
-- its index in the calling task's registered rings. Read there with
-- probe reads into one variable: followed as task->io_uring->... the
-- branch left states the verifier could not join, and it checked the rest
-- of the program twice (2,712 instructions instead of 1,957).
local ring_of_enter = "map_get(ring_of_fd, map_key(ring_of_fd, pid, args.fd))"
if has_field("struct io_uring_task", "registered_rings") then
  ring_of_enter = c([[!(args.flags & ${REGISTERED}) ? ${by_fd} : (__u32)args.fd >= ${MAX} ? 0 : ({
    __u64 __p = 0; bpf_probe_read_kernel(&__p, 8, &task->io_uring);
    bpf_probe_read_kernel(&__p, 8, &((struct io_uring_task *)__p)->registered_rings[(__u32)args.fd]);
    bpf_probe_read_kernel(&__p, 8, &((struct file *)__p)->private_data); __p; })]],
    { REGISTERED = iouring.ENTER_REGISTERED_RING, MAX = iouring.RINGFD_REG_MAX, by_fd = ring_of_enter })
end
-- C: `seen`, the state of ring CTX, its requests `submitted` and
-- `completed`, whether it has an SQ poll thread (`sqpoll`: read from the
-- kernel's for a ring of --all-rings not claimed yet), and `state`,
-- the same where it has been traced since it was created (else its
-- counts, and the queue counters from them, would be partial).
local function ring_states(ctx)
  return c([[__auto_type seen = ${ring}; __auto_type state = seen && seen->created ? seen : NULL;
             __u64 submitted = seen ? seen->submitted : 0, completed = seen ? seen->completed : 0;
             __u8 sqpoll = seen ? seen->sqpoll : param.all_rings && ${ctx} &&
               (((struct io_ring_ctx *)(${ctx}))->flags & ${SQPOLL});]],
           { ring = ring_of(ctx), ctx = ctx, SQPOLL = iouring.SETUP_SQPOLL })
end
-- C: reads the calling process's file at FD into FILE (a __u64), and
-- then runs THEN; both only where FD is open.
local function file_of_fd(fd, file, then_)
  return c([[{ __u64 __t = 0; __u32 __max = 0; bpf_probe_read_kernel(&__t, 8, &task->files);
    bpf_probe_read_kernel(&__t, 8, &((struct files_struct *)__t)->fdt);
    bpf_probe_read_kernel(&__max, 4, &((struct fdtable *)__t)->max_fds);
    bpf_probe_read_kernel(&__t, 8, &((struct fdtable *)__t)->fd);
    if ((__u32)(${fd}) < __max) {
      bpf_probe_read_kernel(&${file}, 8, (__u64 *)__t + (__u32)(${fd})); ${then_} } }]],
    { fd = fd, file = file, then_ = then_ or "" })
end
-- With --all_rings, a ring created before tracing is not in ring_of_fd:
-- its fd's file's private data is taken for the ring, which is one where
-- it was claimed (at its first request seen: at the call's end, for the
-- call that submits that request), and else matches none.
enter.start_action = c([[
  __u64 ring = ${ring_of_enter};
  if (!ring && param.all_rings && !(args.flags & ${REGISTERED})) {
    ${file_of_fd} }
  ${states}
  if (!state && !param.all_rings) return 0;
  ${read_entry}__u32 reaped = 0; if (state) {
    reaped = state->entered ? cq_head - state->cq_head : 0;
    if (reaped) { ${time_reaping}}
    state->cq_head = cq_head; state->entered = 1; }]],
  { ring_of_enter = ring_of_enter, REGISTERED = iouring.ENTER_REGISTERED_RING,
    file_of_fd = file_of_fd("args.fd", "ring", "bpf_probe_read_kernel(&ring, 8, &((struct file *)ring)->private_data);"),
    states = ring_states("ring"), read_entry = read_entry,
    time_reaping = time_reaping("state") })
enter.start_draw = {
  queues_at_entry,
  { kind = "instant", name = "reaped", category = cat, track = { id = "ring", name = "ring" },
    args = { reaped = "(__u32)reaped", cq_head = "(__u32)cq_head" }, when = "reaped" },
}
local read_exit, queues_at_exit = queues("start.ring")
-- Requests per enter, for the summary (counted per CPU: no atomic adds),
-- of the calls that submit: not waits for completions alone (to_submit
-- 0), nor an SQ poll ring's, whose thread submits (its calls wake the
-- thread, or wait for room in its queue: counted apart).
enter.stop_action = c([[
  ${states} ${read_exit}if (args.ret >= 0 && start.to_submit &&
      !(start.flags & ${SQ_WAIT}) && !sqpoll) {
    __u64 *__calls = map_ptr(enters, 0), *__submits = map_ptr(enters, 1);
    if (__calls) *__calls += 1; if (__submits) *__submits += args.ret; }
  if (start.flags & ${SQ_WAKEUP}) {
    __u64 *__n = map_ptr(enters, ${SQ_WAKEUPS}); if (__n) *__n += 1; }
  if (start.flags & ${SQ_WAIT}) {
    __u64 *__n = map_ptr(enters, ${SQ_WAITS}); if (__n) *__n += 1; }]],
  { states = ring_states("start.ring"), read_exit = read_exit, SQ_WAIT = iouring.ENTER_SQ_WAIT,
    SQ_WAKEUP = iouring.ENTER_SQ_WAKEUP, SQ_WAKEUPS = SQ_WAKEUPS, SQ_WAITS = SQ_WAITS })
table.insert(enter.draw, queues_at_exit)
latency(enter)

-- Where a traced ring leaves the trace (the application closes its fd, or
-- its process exits with it open, before the kernel closes its files):
-- - the completions left in its queue are counted for the summary;
-- - it is marked closed: a new ring may take its entry (its fd may live on
--   in another process: until then it is still traced);
-- - its queue counters are drawn once more, as completions posted after
--   its last enter, and those reaped since, would else show on its track
--   to the end.
-- C that does so for ring CTX, whose state is STATE (by default, searched
-- for), with `ring` (0 for no counters), and the counters drawn.
local function ring_leaves(ctx, state)
  local x = "((struct io_ring_ctx *)(leaving))"
  local act = c([[
    __u64 leaving = (__u64)(${ctx}), ring = 0; __s64 in_flight = 0; __u32 sq = 0, cq = 0;
    { __u32 __left = ${x}->rings->cq.tail - ${x}->rings->cq.head; __auto_type __st = ${state};
      /* Counted once: a ring that left at its main thread's exit may be
         closed by another thread after. */
      if (__left && !(__st && __st->closed)) {
        __u64 *__n = map_ptr(enters, ${UNREAPED}), *__r = map_ptr(enters, ${RINGS});
        if (__n) *__n += __left; if (__r) *__r += 1; }
      if (__st) { __st->closed = 1; if (__st->created && __st->entered) {
        ring = leaving; in_flight = (__s64)(__st->submitted - __st->completed + __st->aux);
        sq = ${x}->rings->sq.tail - ${x}->rings->sq.head; cq = __left; } } }]],
    { ctx = ctx, x = x, UNREAPED = UNREAPED, RINGS = RINGS_UNREAPED,
      state = state or ring_of("leaving") }) .. " "
  local draw = { kind = "counter", name = "queues", category = cat, track = { id = "ring", name = "ring" },
                 args = { in_flight = "in_flight", sq = "sq", cq = "cq" }, when = "ring" }
  return act, draw
end
-- C: `__refs`, the references to file `__file` (its fds in all processes,
-- registrations, calls under way in other threads).
local file_refs = has_field("struct file", "f_ref")
  and [[__s64 __refs = 0; bpf_probe_read_kernel(&__refs, 8, &((struct file *)__file)->f_ref);
        __refs += 1;]]  -- file_ref_t counts from 0 for one
  or [[__s64 __refs = 0; bpf_probe_read_kernel(&__refs, 8, &((struct file *)__file)->f_count);]]
local closed_key = "map_key(ring_of_fd, pid, args.fd)"
local leaves_at_close, queues_at_close = ring_leaves("ctx")
-- A close leaves the ring only where it drops the last reference to it:
-- else (a dup, a child, a registration keeps it) only its fd goes, and it
-- leaves at its process's exit.
probe("tracepoint:syscalls:sys_enter_close", {
  filter = "map_has(owners, pid) && map_has(ring_of_fd, " .. closed_key .. ")",
  action = (function()
    local t = { c([[
      __u64 ctx = map_get(ring_of_fd, ${key}); map_del(ring_of_fd, ${key});
      __auto_type rings_of = map_ptr(process_rings, pid);
      __u64 __file = 0, __ring = 0; ${file_of_fd}
      if (__ring != ctx) return 0;  /* the fd is no longer the ring's */
      ${file_refs} if (__refs > 1) {]],
      { key = closed_key, file_refs = file_refs,
        file_of_fd = file_of_fd("args.fd", "__file",
                                "bpf_probe_read_kernel(&__ring, 8, &((struct file *)__file)->private_data);") }) .. " " }
    for _, f in ipairs(RING_FIELDS) do
      t[#t + 1] = c("if (rings_of && rings_of->${f} == ctx) rings_of->fd_${f} = -1;", { f = f }) .. " "
    end
    t[#t + 1] = "return 0; } " .. leaves_at_close .. " if (rings_of) { "
    for _, f in ipairs(RING_FIELDS) do
      t[#t + 1] = c("if (rings_of->${f} == ctx) rings_of->${f} = 0;", { f = f }) .. " "
    end
    return table.concat(t) .. "}"
  end)(),
  draw = queues_at_close,
})
-- C: forgets the fd of the ring in field F of process_rings entry
-- `rings_of`.
local function forget_fd(f)
  return c("map_del(ring_of_fd, map_key(ring_of_fd, pid, rings_of->fd_${f}));", { f = f }) .. " "
end
-- C: the state of the ring in field F of process_rings entry `rings_of`,
-- at the entry it was given, or NULL when another ring took it.
local function state_at(f)
  return c([[({ __auto_type __at = map_ptr(rings, (__u32)rings_of->slot_${f});
               __at && __at->ctx == rings_of->${f} ? __at : NULL; })]], { f = f })
end
-- At its main thread's exit, each of the process's rings leaves (a probe
-- each, as one probe's draws share their arguments' names): before the
-- kernel closes its files, where io-workers may outlive it. Other threads
-- may go on with them (pthread_exit from main): their fds are forgotten
-- only once its last thread is gone, with the process, so that others
-- find room.
for _, f in ipairs(RING_FIELDS) do
  local leaves, draw = ring_leaves("rings_of->" .. f, state_at(f))
  probe("tracepoint:sched:sched_process_exit", {
    filter = "tid == pid",
    action = c([[__auto_type rings_of = map_ptr(process_rings, pid);
                 if (!rings_of || !rings_of->${f}) return 0; ]], { f = f }) .. leaves,
    draw = draw,
  })
end
-- The last thread gone is the one whose exit finds none alive (each
-- counts itself out before its tracepoint) once the main thread's drew
-- its rings: whichever of the two comes second. The main thread says so
-- with an atomic add, which orders it before its read of the count.
probe("tracepoint:sched:sched_process_exit", {
  filter = "map_has(owners, pid)",
  action = (function()
    local t = { [[
      __auto_type rings_of = map_ptr(process_rings, pid);
      if (rings_of && tid == pid) __sync_fetch_and_add(&rings_of->main_left, 1);
      __u64 __signal = 0; __s32 __live = 1; bpf_probe_read_kernel(&__signal, 8, &task->signal);
      bpf_probe_read_kernel(&__live, 4, &((struct signal_struct *)__signal)->live);
      if (__live || (rings_of && !rings_of->main_left)) return 0;
      if (rings_of) { ]] }
    for _, f in ipairs(RING_FIELDS) do
      t[#t + 1] = forget_fd(f)
    end
    return table.concat(t) ..
      "} map_del(process_rings, pid); map_del(owners, pid); map_del(live_workers, pid); return 0;"
  end)(),
})
-- An exec closes the process's rings with its other close-on-exec fds,
-- before this tracepoint: those whose fd is no longer theirs leave the
-- trace as at a close, but unread (the kernel may have freed them), and
-- their fds are forgotten. One whose fd the program kept open goes on.
probe("tracepoint:sched:sched_process_exec", {
  filter = "map_has(process_rings, pid)",
  action = (function()
    local t = { "__auto_type rings_of = map_ptr(process_rings, pid); if (!rings_of) return 0; " }
    for _, f in ipairs(RING_FIELDS) do
      t[#t + 1] = c([[if (rings_of->${f}) { __u64 __kept = 0; if (rings_of->fd_${f} >= 0) { ${file_of_fd} }
                      if (__kept != rings_of->${f}) { __auto_type __st = ${state}; if (__st) __st->closed = 1;
                        ${forget} rings_of->${f} = 0; } }]],
                    { f = f, state = state_at(f), forget = forget_fd(f),
                      file_of_fd = file_of_fd("rings_of->fd_" .. f, "__kept",
                                              "bpf_probe_read_kernel(&__kept, 8, &((struct file *)__kept)->private_data);") }) .. " "
    end
    return table.concat(t) .. "return 0;"
  end)(),
})

-- At exit, the summary.
local quantiles = require "quantiles"

local path_names = { [INLINE] = "inline", [POLL] = "poll", [IO_WORKER] = "io-worker",
                     [RETRIED] = "retried" }

local function summary()
  local by_op = {}
  -- Row opcode * PATHS + path of latency slots, where one was counted.
  for _, used in ipairs(latency_rows:entries()) do
    local id = used.key
    local row = { opcode = id // PATHS, path = id % PATHS, requests = 0, slots = {} }
    for slot = 0, LATENCY_SLOTS - 1 do
      local n = latencies:get(id * LATENCY_SLOTS + slot) or 0
      if n > 0 then
        row.requests = row.requests + n
        row.slots[slot] = n
      end
    end
    if row.requests > 0 then by_op[id] = row end
  end
  local ops, requests = {}, 0
  for _, row in pairs(by_op) do
    requests = requests + row.requests
    local other = row.opcode == OTHER_OPCODES
    ops[#ops + 1] = { op = iouring.op_names[row.opcode] or (other and "op >= " or "op ") .. row.opcode,
                      opcode = row.opcode,
                      path = path_names[row.path], requests = row.requests,
                      p50_us = quantiles.value(row.slots, 0.5) / 1000,
                      p99_us = quantiles.value(row.slots, 0.99) / 1000 }
  end
  table.sort(ops, function(a, b)
    if a.opcode ~= b.opcode then return a.opcode < b.opcode end
    return a.path < b.path
  end)
  local calls, submitted = enters:get(0) or 0, enters:get(1) or 0
  local overflows = enters:get(OVERFLOWS) or 0
  local seen, most = enters:get(WORKERS_SEEN) or 0, busiest:get(0) or 0
  local reap_slots, timed = {}, 0
  for slot = 0, LATENCY_SLOTS - 1 do
    local n = reap_times:get(slot) or 0
    if n > 0 then
      reap_slots[slot], timed = n, timed + n
    end
  end
  return { requests = requests, ops = ops, enters = calls, submitted = submitted,
           reaps_timed = timed,
           reap_p50_us = timed > 0 and quantiles.value(reap_slots, 0.5) / 1000 or 0,
           reap_p99_us = timed > 0 and quantiles.value(reap_slots, 0.99) / 1000 or 0,
           unreaped = enters:get(UNREAPED) or 0, rings_unreaped = enters:get(RINGS_UNREAPED) or 0,
           sq_wakeups = enters:get(SQ_WAKEUPS) or 0, sq_waits = enters:get(SQ_WAITS) or 0,
           requests_per_enter = calls > 0 and submitted / calls or 0, io_workers = seen,
           io_workers_at_once = most >> 32, io_workers_process = most & 0xffffffff,
           overflows = overflows, rings_evicted = ring_claims:get(EVICTED) or 0,
           requests_untracked = enters:get(REQUESTS_EVICTED) or 0,
           requests_skipping = (enters:get(REQUESTS_SKIPPING) or 0) - (enters:get(SKIPPING_FAILED) or 0),
           lost = lost() }
end

-- What io_uring users ask about, found in the summary: each finding named,
-- said in a line, with the figures behind it.
local function diagnose(s)
  local findings = {}
  local function find(name, text, evidence)
    findings[#findings + 1] = { name = name, text = text, evidence = evidence }
  end
  -- Requests the kernel could not run without blocking go to io-wq's
  -- workers: a thread switch each, and workers to create.
  local punted, total, by_op = 0, {}, {}
  for _, o in ipairs(s.ops) do
    total[o.op] = (total[o.op] or 0) + o.requests
    if o.path == "io-worker" then
      punted = punted + o.requests
      by_op[#by_op + 1] = o
    end
  end
  if punted > 0 then
    local ops, parts = {}, {}
    for _, o in ipairs(by_op) do
      local share = o.requests / total[o.op]
      ops[#ops + 1] = { op = o.op, requests = o.requests, share = share }
      parts[#parts + 1] = string.format("%s %d (%.0f%%)", o.op, o.requests, 100 * share)
    end
    find("punted_to_io_wq",
         string.format("%d of %d requests (%.0f%%) ran on io-workers: %s", punted, s.requests,
                       100 * punted / s.requests, table.concat(parts, ", ")),
         { requests = punted, share = punted / s.requests, ops = ops })
  end
  -- io-wq starts a worker for each request that blocks while the others
  -- are busy, up to 4 per CPU by default: more than the CPUs can run.
  local cpus = ncpus()
  if s.io_workers_at_once > cpus then
    find("io_worker_fanout",
         string.format("process %d ran %d io-workers at once on %d CPUs (%d io-workers seen in " ..
                       "all): cap them with IORING_REGISTER_IOWQ_MAX_WORKERS, or block less",
                       s.io_workers_process, s.io_workers_at_once, cpus, s.io_workers),
         { pid = s.io_workers_process, at_once = s.io_workers_at_once, cpus = cpus,
           io_workers = s.io_workers })
  end
  -- A system call per request or two: what io_uring is there to save.
  if s.enters > 0 and s.requests_per_enter < 2 then
    find("small_batches",
         string.format("%d io_uring_enter calls submitted %.2f requests each: submit more " ..
                       "requests per call", s.enters, s.requests_per_enter),
         { enters = s.enters, submitted = s.submitted, requests_per_enter = s.requests_per_enter })
  end
  -- Completions the application never looked at, or looked at late.
  if s.unreaped > 0 then
    find("unreaped_completions",
         string.format("%d completions were ready but never reaped when their ring was closed " ..
                       "or its process exited, in %d ring%s", s.unreaped, s.rings_unreaped,
                       s.rings_unreaped == 1 and "" or "s"),
         { completions = s.unreaped, rings = s.rings_unreaped })
  end
  if s.reaps_timed > 0 and s.reap_p50_us >= 1000 then
    find("late_reaping",
         string.format("completions were seen reaped %.1f us (p50), %.1f us (p99) after they " ..
                       "were posted (%d timed): the kernel sees reaping at the application's " ..
                       "next io_uring_enter, so an application that reaps at once but enters " ..
                       "seldom shows the time between its enters; one that reaps only after " ..
                       "entering should reap sooner", s.reap_p50_us, s.reap_p99_us,
                       s.reaps_timed),
         { completions = s.reaps_timed, p50_us = s.reap_p50_us, p99_us = s.reap_p99_us })
  end
  -- An SQ poll thread sleeps once it found nothing to do for
  -- sq_thread_idle, and the application must wake it with a system call,
  -- which SQPOLL is there to save (once, at the start, it always does);
  -- one that cannot keep up makes the application wait for room.
  if s.sq_wakeups > 1 then
    find("sqpoll_idle",
         string.format("the application woke an SQ poll thread %d times with io_uring_enter " ..
                       "(IORING_ENTER_SQ_WAKEUP): it fell asleep between submissions; submit " ..
                       "steadily, or raise sq_thread_idle", s.sq_wakeups),
         { wakeups = s.sq_wakeups, enters = s.enters })
  end
  if s.sq_waits > 0 then
    find("sqpoll_saturated",
         string.format("the application waited %d times for room in the submission queue " ..
                       "(IORING_ENTER_SQ_WAIT): the SQ poll thread takes requests more slowly " ..
                       "than they come; a bigger queue, or more rings and threads", s.sq_waits),
         { waits = s.sq_waits, enters = s.enters })
  end
  if s.overflows > 0 then
    find("cq_overflow",
         string.format("%d completions found the completion queue full and went through the " ..
                       "overflow list: reap sooner, or make the queue bigger (IORING_SETUP_CQSIZE)",
                       s.overflows),
         { overflows = s.overflows, requests = s.requests })
  end
  -- Never silent: a ring the tracer stopped following.
  if s.rings_evicted > 0 then
    find("rings_untraced",
         string.format("%d ring%s still open gave way to newer ones in the tracer's table " ..
                       "of %d rings: requests submitted to them later are not in the trace; " ..
                       "raise --rings", s.rings_evicted, s.rings_evicted == 1 and "" or "s",
                       RING_ENTRIES),
         { rings = s.rings_evicted })
  end
  if s.requests_untracked > 0 then
    find("requests_untracked",
         string.format("%d request%s in flight gave way to newer ones in the tracer's table " ..
                       "of %d requests (4 in each of its buckets): their flows do not end and " ..
                       "their latencies are not counted above; raise --requests", s.requests_untracked,
                       s.requests_untracked == 1 and "" or "s", WAYS << REQUEST_BUCKET_BITS),
         { requests = s.requests_untracked })
  end
  return findings
end

local function summary_text(s)
  local lines = { string.format("io_uring: %d requests completed, %d io_uring_enter calls " ..
                                "submitting %.2f requests each, %d io-workers, %d events lost",
                                s.requests, s.enters, s.requests_per_enter, s.io_workers, s.lost) }
  if s.requests_skipping > 0 then
    lines[#lines + 1] = string.format("%d more requests posted no completion: they asked for none " ..
                                      "unless they failed (IOSQE_CQE_SKIP_SUCCESS), and did not fail",
                                      s.requests_skipping)
  end
  if #s.ops > 0 then
    lines[#lines + 1] = string.format("%-18s %-9s %10s %12s %12s", "OPCODE", "PATH", "REQUESTS",
                                      "P50(us)", "P99(us)")
    for _, o in ipairs(s.ops) do
      lines[#lines + 1] = string.format("%-18s %-9s %10d %12.1f %12.1f", o.op, o.path, o.requests,
                                        o.p50_us, o.p99_us)
    end
  end
  if #s.findings > 0 then
    lines[#lines + 1] = "findings:"
    for _, f in ipairs(s.findings) do
      lines[#lines + 1] = "  " .. f.name .. ": " .. f.text
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

probe("end", function()
  local s = summary()
  s.findings = diagnose(s)
  report{ type = "uring_summary", data = s, text = summary_text(s) }
end)

-- What a script that adds a layer to this trace uses, through
-- `local uring = require "uring"` (see the README): C expressions for a
-- request's flow, whether it is traced, and where its ring is drawn.
local api = { category = cat, sample = sample }
-- C: the flow of request REQ (a struct io_kiocb *) on ring RING, which
-- a drawing joins with flow = { id = uring.flow(req, ring), point = "step" }.
function api.flow(req, ring)
  return flow_of({ req = req, ctx = ring })
end
-- C: whether request REQ is traced (its ring traced, kept by --sample).
function api.traced(req)
  return kept(req)
end
-- For request REQ (a struct io_kiocb *, or its address): the request,
-- its flow and whether it is traced, as C expressions.
function api.request(req)
  req = "((struct io_kiocb *)(__u64)(" .. req .. "))"
  return { req = req, flow = api.flow(req, req .. "->ctx"), traced = "(" .. req .. " && " ..
           kept(req) .. ")" }
end
-- The same for a read's or write's struct kiocb *KIOCB, which begins its request.
api.kiocb = api.request
-- C: the address of the request this thread is issuing (a __u64, 0 when
-- none), for a probe in the code a request runs (vfs, filesystem, page
-- cache). On an io-worker, its current work (the kernel's own record of
-- it). Elsewhere, where fentry or a kprobe may see io_issue_sqe, the
-- request from its issue's entry to its return. Else the request the
-- thread submitted last, until its next io_uring event (its issue punted
-- to an io-worker, a poll armed, completions posted or waited for, task
-- work run, a request deferred or linked) or the end of its
-- io_uring_enter; and only while its issue may still be running: it has
-- a file, and is not a direct read or write (which go on without the
-- thread) nor a read waiting for its pages. Task work run before the next
-- event (a read issued again once its pages came in) is then not counted
-- to it, nor to any request. The probes that keep this are added by the
-- first call.
local running
function api.current()
  if not running then
    running = map{ name = "uring_running", type = "lru_hash", key = "u32", value = "u64",
                   size = 4096 }
    local forget = { action = "map_del(uring_running, tid);" }
    if issue_at then
      probe(issue_at, { action = "map_set(uring_running, tid, (__u64)args.req);" })
      probe((issue_at:gsub("^fentry:", "fexit:"):gsub("^kprobe:", "kretprobe:")), forget)
    else
      probe(submit_at, { action = c("map_set(uring_running, tid, (__u64)${req});", { req = S.req }) })
      probe(complete_at, forget)
      for _, event in ipairs({ "queue_async_work", "poll_arm", "cqring_wait", "task_work_run",
                               "local_work_run", "defer", "link" }) do
        local at = "tracepoint:io_uring:io_uring_" .. event
        if available(at) then probe(at, forget) end
      end
      probe("tracepoint:syscalls:sys_exit_io_uring_enter", forget)
    end
  end
  local on_worker = issue_at and "map_get(uring_running, tid)" or "0"
  if has_field("struct task_struct", "worker_private") and has_field("struct io_worker", "cur_work")
     and has_field("struct io_kiocb", "work") then
    -- Locals named __* are taken for pointers the program may load
    -- directly, so these have names of their own.
    on_worker = c([[({ __u64 running_worker =
                         (__u64)((struct task_struct *)bpf_get_current_task())->worker_private;
                       __u64 running_work = running_worker ?
                         (__u64)((struct io_worker *)running_worker)->cur_work : 0;
                       running_work ? running_work -
                         __builtin_preserve_field_info(((struct io_kiocb *)0)->work, 0) : 0; })]])
  end
  if not issue_at then
    -- The worker's stint on the CPU, drawn as it leaves, began before this.
    on_worker = c("({ ${first_in_stint} ${work}; })",
                  { first_in_stint = first_in_stint("1"), work = on_worker })
  end
  local elsewhere = "map_get(uring_running, tid)"
  if not issue_at then
    elsewhere = c([[({ __u64 running_req = map_get(uring_running, tid);
                       __u8 running_op = running_req ? ((struct io_kiocb *)running_req)->opcode : 0;
                       __u64 running_file = running_req ? (__u64)((struct io_kiocb *)running_req)->file : 0;
                       running_file && !(${is_rw} && (((struct kiocb *)running_req)->ki_flags & ${DIRECT}))
                         && !${waits} ? running_req : 0; })]],
                  { is_rw = is_rw("running_op"), DIRECT = IOCB_DIRECT,
                    waits = waits_for_pages("running_req", "running_op") })
  end
  return c("(${worker} ? ${on_worker} : ${elsewhere})",
           { worker = on_io_worker, on_worker = on_worker, elsewhere = elsewhere })
end
-- The track of ring RING (a struct io_ring_ctx *), for draw = {track = ...}.
function api.ring_track(ring)
  return { id = "(__u64)(" .. ring .. ")", name = "ring" }
end
return api
