-- the same completions seen through every probe kind this kernel has, each
-- following kernel pointers its own way (direct BTF access or probe reads)
local kind = param("kind", { type = "string", default = "tp_btf", help = "probe kind" })

if kind == "tp_btf" then
  -- req is a `void *` there: followed through a cast, it is read like a
  -- kprobe's pointers, and so is what it leads to
  probe("tp_btf:io_uring_complete", {
    capture = { user_data = "args.cqe->user_data", op = "((struct io_kiocb *)args.req)->opcode",
                ring_flags = "((struct io_kiocb *)args.req)->ctx->flags" },
  })
elseif kind == "rawtracepoint" then
  probe("rawtracepoint:io_uring_complete", {
    filter = "args.cqe->res == 0",
    capture = { user_data = "args.cqe->user_data", flags = "args.ctx->flags" },
  })
elseif kind == "data_loc" then
  probe("tracepoint:io_uring:io_uring_submit_req", { capture = { "args.op_str", "args.user_data" } })
elseif kind == "uprobe" then
  local lib = "/usr/lib/x86_64-linux-gnu/liburing.so.2"
  probe("uprobe:" .. lib .. ":io_uring_queue_init", { capture = { entries = "args.arg0" } })
  -- `retval` captured under its own name, and through an expression
  probe("uretprobe:" .. lib .. ":io_uring_queue_init",
        { capture = { "retval", result = "(int)retval" } })
end
