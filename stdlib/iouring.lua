-- iouring: io_uring's numbers by name, for the C a script writes
-- (require "iouring"). Opcodes are this kernel's enum io_uring_op where
-- its BTF has them, else the uapi number; flags are the uapi header's,
-- whose values never change.
local iouring = {}

-- The opcodes in uapi order: index = number.
local uapi_ops = { [0] = "NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED",
  "POLL_ADD", "POLL_REMOVE", "SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT",
  "TIMEOUT_REMOVE", "ACCEPT", "ASYNC_CANCEL", "LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT",
  "CLOSE", "FILES_UPDATE", "STATX", "READ", "WRITE", "FADVISE", "MADVISE", "SEND", "RECV",
  "OPENAT2", "EPOLL_CTL", "SPLICE", "PROVIDE_BUFFERS", "REMOVE_BUFFERS", "TEE", "SHUTDOWN",
  "RENAMEAT", "UNLINKAT", "MKDIRAT", "SYMLINKAT", "LINKAT", "MSG_RING", "FSETXATTR", "SETXATTR",
  "FGETXATTR", "GETXATTR", "SOCKET", "URING_CMD", "SEND_ZC", "SENDMSG_ZC", "READ_MULTISHOT",
  "WAITID", "FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_WAITV", "FIXED_FD_INSTALL", "FTRUNCATE", "BIND",
  "LISTEN", "RECV_ZC", "EPOLL_WAIT", "READV_FIXED", "WRITEV_FIXED", "PIPE" }

-- iouring.op.READ: an opcode's number. iouring.op_names[22]: its name.
iouring.op, iouring.op_names = {}, {}
for number = 0, #uapi_ops do
  local name = uapi_ops[number]
  local value = enum_value("io_uring_op", "IORING_OP_" .. name) or number
  iouring.op[name], iouring.op_names[value] = value, name
end

iouring.SETUP_SQPOLL = 2     -- IORING_SETUP_SQPOLL: an SQ poll thread submits
iouring.SETUP_REGISTERED_FD_ONLY = 1 << 15  -- the ring has no fd, only a registered index
iouring.CQE_F_MORE = 2       -- IORING_CQE_F_MORE: more completions of this request follow
iouring.CQE_F_NOTIF = 8      -- IORING_CQE_F_NOTIF: a zero-copy send's notification, its last
iouring.ENTER_GETEVENTS = 1  -- IORING_ENTER_GETEVENTS: wait for completions
iouring.ENTER_SQ_WAKEUP = 2  -- IORING_ENTER_SQ_WAKEUP: wake the SQ poll thread
iouring.ENTER_SQ_WAIT = 4    -- IORING_ENTER_SQ_WAIT: wait for room in the submission queue
iouring.ENTER_REGISTERED_RING = 16  -- IORING_ENTER_REGISTERED_RING: fd indexes the task's registered rings
iouring.RINGFD_REG_MAX = 16  -- IO_RINGFD_REG_MAX: how many rings a task may register

return iouring
