#!/usr/bin/env python3
"""Run time of the BPF programs a process holds, from the kernel's own
accounting (BPF_ENABLE_STATS: run_cnt and run_time_ns per program).

    from bpf_prog_stats import enable_stats, programs_of
    with enable_stats():          # accounting on while inside (costs ~2 clock reads a run)
        ...                       # run the traced workload
        progs = programs_of(pid)  # [{"id", "name", "run_cnt", "run_time_ns"}]
    # or, for a process that may close its programs first (exit):
    held = hold_programs(pid)     # before the workload; then, after it:
    progs = read_held(held)

As a command, `bpf_prog_stats.py PID` prints the programs of PID (their
counts only grow while some process has stats enabled). x86-64 only."""
import ctypes, contextlib, os, struct, sys

NR_BPF = 321  # x86-64
BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD, BPF_ENABLE_STATS = 13, 15, 32
INFO_LEN = 216  # struct bpf_prog_info up to recursion_misses
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), 128)
    r = _libc.syscall(NR_BPF, cmd, buf, 128)
    if r < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r


@contextlib.contextmanager
def enable_stats():
    """Run-time accounting for every BPF program, while the fd is open."""
    fd = _bpf(BPF_ENABLE_STATS, struct.pack("<I", 0))  # BPF_STATS_RUN_TIME
    try:
        yield
    finally:
        os.close(fd)


def _info_of_fd(prog_id, fd):
    info = ctypes.create_string_buffer(INFO_LEN)
    attr = struct.pack("<IIQ", fd, INFO_LEN, ctypes.addressof(info))
    _bpf(BPF_OBJ_GET_INFO_BY_FD, attr)
    raw = info.raw
    name = raw[64:80].split(b"\0", 1)[0].decode()
    run_time_ns, run_cnt = struct.unpack_from("<QQ", raw, 192)
    return {"id": prog_id, "name": name, "run_cnt": run_cnt, "run_time_ns": run_time_ns}


def _info(prog_id):
    fd = _bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("<I", prog_id))
    try:
        return _info_of_fd(prog_id, fd)
    finally:
        os.close(fd)


def hold_programs(pid):
    """Fds of our own on the BPF programs process pid holds, in fd order,
    so that their accounting can still be read after pid has closed them
    (a tracer that stops by itself when its target exits): [(id, fd)]."""
    held = []
    for prog_id in _program_ids(pid):
        try:
            held.append((prog_id, _bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("<I", prog_id))))
        except OSError:
            pass  # unloaded meanwhile
    return held


def read_held(held):
    """The accounting of programs from hold_programs, whose fds it closes."""
    try:
        return [_info_of_fd(prog_id, fd) for prog_id, fd in held]
    finally:
        for _, fd in held:
            os.close(fd)


def _program_ids(pid):
    ids = []
    fds = sorted(os.listdir(f"/proc/{pid}/fd"), key=int)
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                text = f.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("prog_id:"):
                prog_id = int(line.split()[1])
                if prog_id not in ids:
                    ids.append(prog_id)
    return ids


def programs_of(pid):
    """The BPF programs process pid holds an fd of, in fd order."""
    progs = []
    for prog_id in _program_ids(pid):
        try:
            progs.append(_info(prog_id))
        except OSError:
            pass  # unloaded meanwhile
    return progs


if __name__ == "__main__":
    for p in programs_of(int(sys.argv[1])):
        print(f"{p['id']:6} {p['name']:16} {p['run_cnt']:12,} {p['run_time_ns']:15,} ns")
