-- uring.lua's trace, and each direct read's pass through iomap as a step
-- of its io_uring request's flow: a layer added to the io_uring trace
local uring = require "uring"
local dio = uring.kiocb("args.iocb")
probe("tp_btf:iomap_dio_rw_begin", {
  filter = dio.traced,
  draw = { kind = "slice", name = "iomap_dio", category = uring.category,
           args = { pos = "args.iocb->ki_pos" }, flow = { id = dio.flow, point = "step" } },
})
