-- a script whose top level never ends
probe("tracepoint:io_uring:io_uring_complete")
while true do end
