-- fifteen programs, one of which the verifier refuses: the heaviest of them
-- with --alone, else the second heaviest (the programs load in two halves)
local alone = param("alone", { type = "bool", default = false, help = "no heavier probe" })
local bad = { bad = "*((long *)args.ctx + 100000)" }
for i = 1, 8 do bad["v" .. i] = "(__u64)args.req + " .. i end
probe("tp_btf:io_uring_complete", { capture = bad })
if not alone then
  local many = {}
  for i = 1, 24 do many["v" .. i] = "args.fd + " .. i end
  probe("tracepoint:syscalls:sys_enter_close", { capture = many })
end
for _, call in ipairs({ "read", "write", "openat", "getpid", "dup", "pipe2", "lseek", "fsync",
                       "mkdirat", "unlinkat", "fchmod", "umask", "getppid" }) do
  probe("tracepoint:syscalls:sys_enter_" .. call, { capture = { n = "args.__syscall_nr" } })
end
