-- reads far past the end of the ring context: the verifier refuses it
probe("tp_btf:io_uring_complete", {
  capture = { bad = "*((long *)args.ctx + 100000)" },
})
