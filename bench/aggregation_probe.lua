-- bench/aggregation.sh: one probe on io_uring_complete, holding one of the
-- in-kernel aggregations (or none: the empty program, the floor).
local kind = param("kind", { type = "string", default = "empty",
                             help = "empty, count, count_comm or hist" })
local tp = "tracepoint:io_uring:io_uring_complete"

if kind == "empty" then
  probe(tp)
elseif kind == "count" then
  probe(tp, { aggregate = count{ name = "n" } })
elseif kind == "count_comm" then
  probe(tp, { aggregate = count{ name = "n", by = { "comm" } } })
elseif kind == "hist" then
  probe(tp, { aggregate = hist{ name = "h", value = "args.user_data" } })
else
  error("unknown --kind " .. kind)
end
