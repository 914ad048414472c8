-- blockio: the probes of a block request's life on whatever this kernel
-- has, and how to read the request at each (require "blockio").
local blockio = {}

-- The request is issued to the driver: a kprobe where blk-mq starts it,
-- else fentry there, else the issue tracepoint (typed through BTF, else
-- its tracefs fields).
local issue = { "kprobe:blk_mq_start_request", "fentry:blk_mq_start_request",
                "tp_btf:block_rq_issue", "tracepoint:block:block_rq_issue" }
-- The request completed: the completion tracepoint sits on every path
-- (batched completions, as NVMe's, never call blk_mq_end_request).
local done = { "tp_btf:block_rq_complete", "tracepoint:block:block_rq_complete" }

-- The struct request at a probe, where it has one.
local function request(probe)
  if probe:match("^tracepoint:") then
    return nil
  end
  return probe:match("^tp_btf:") and "args.arg0" or "args.rq"
end

-- The disk a script's option names: disk(NAME)'s table, nil for "", or an
-- error at the script's line.
function blockio.disk(name)
  if name == "" then
    return nil
  end
  local d, why = disk(name)
  if not d then
    error(why, 2)
  end
  return d
end

-- blockio.probes([DISK], [QUEUED]) -> b, or nil and why. DISK (a table from
-- disk()) keeps only requests to that whole disk; QUEUED asks for `created`,
-- which needs the struct request. b.issue and b.done are probe
-- names; b.typed is true when both give the struct request, false when
-- only the tracepoints' fields can be read (a kernel without BTF).
-- b.requests(SPEC, [HANDLER]) times each request (a latency pair).
-- b.at(PROBE) gives C expressions to use at b.issue or b.done:
--   key      names the request (the same value at issue and done)
--   filter   true for requests to DISK (nil without DISK)
--   disk     the disk's name as a str() capture (typed), else its dev_t
--   sector, bytes (at issue), op (blockio.letter turns it into R, W...)
--   created  (typed) when the block layer took the request, from its own
--            accounting (rq->start_time_ns; 0 when the disk keeps none)
--   id       one number naming the request while it is in flight (a flow id)
function blockio.probes(disk, queued)
  local first, why = available(issue)
  local last, last_why = available(done)
  if not first or not last then
    return nil, "block requests cannot be traced on this kernel: " .. (why or last_why)
  end
  local b = { issue = first, done = last }
  b.typed = request(first) ~= nil and request(last) ~= nil
  if not b.typed then
    -- Both must name the request alike: tracepoints at both ends.
    b.issue = "tracepoint:block:block_rq_issue"
    b.done = "tracepoint:block:block_rq_complete"
    if queued then
      return nil, "-Q needs the kernel's BTF (struct request)"
    end
  end
  function b.at(probe)
    local rq = b.typed and request(probe)
    if not rq then
      local at = { key = { dev = "args.dev", sector = "args.sector" }, disk = "args.dev",
                   sector = "args.sector", bytes = "args.bytes", op = "args.rwbs[0]",
                   id = "((__u64)args.dev << 40 ^ args.sector)" }
      if disk then
        at.filter = "args.dev == " .. disk.dev
      end
      return at
    end
    local at = { key = { rq = "(__u64)" .. rq }, id = "(__u64)" .. rq,
                 disk = "str(" .. rq .. "->q->disk->disk_name, 32)",
                 sector = rq .. "->__sector", bytes = rq .. "->__data_len",
                 op = rq .. "->cmd_flags & 0xff", created = rq .. "->start_time_ns" }
    if disk then
      at.filter = string.format("%s->q->disk->major == %d && %s->q->disk->first_minor == %d",
                                rq, disk.major, rq, disk.minor)
    end
    return at
  end
  -- latency(SPEC, HANDLER) of each request from issue to completion:
  -- SPEC gives the rest (name, carry, into, capture...).
  function b.requests(spec, handler)
    local issue_at, done_at = b.at(b.issue), b.at(b.done)
    spec.start, spec.stop = b.issue, b.done
    spec.key, spec.stop_key, spec.filter = issue_at.key, done_at.key, issue_at.filter
    latency(spec, handler)
  end
  return b
end

-- At b.issue (typed): how long the request waited in the block layer
-- before its issue, in ns (0 when the disk keeps no account of it).
function blockio.waited(at)
  local c = at.created
  return string.format("%s && nsecs > %s ? nsecs - %s : 0", c, c, c)
end

-- A request's operation as one letter, like the block tracepoints' rwbs:
-- from a REQ_OP number (typed) or rwbs' first character (tracepoints).
local letters = { [0] = "R", [1] = "W", [2] = "F", [3] = "D", [5] = "D", [9] = "W" }
function blockio.letter(b, op)
  if not b.typed then
    return string.char(op)
  end
  return letters[op] or "N"
end

return blockio
