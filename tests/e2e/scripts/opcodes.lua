-- io_uring requests per opcode: counted at submission, and at completion
-- through a latency pair that carries the opcode from submit to complete
local submitted = count{ name = "submitted", by = { "args.opcode" } }
local completed = count{ name = "completed", by = { opcode = "start.opcode" } }
local latency_us = hist{ name = "latency", unit = "us", by = { opcode = "start.opcode" } }
probe("tracepoint:io_uring:io_uring_submit_req", { aggregate = submitted })
latency{
  name = "requests",
  start = "tracepoint:io_uring:io_uring_submit_req",
  stop = "tracepoint:io_uring:io_uring_complete",
  key = "args.req",
  carry = { "args.opcode" },
  into = { completed, latency_us },
}
