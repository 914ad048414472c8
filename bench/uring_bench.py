#!/usr/bin/env python3
"""The driver of bench/uring.sh: runs the io_uring workloads under each tracer and prints the report.
Arguments come from the shell script, in its order.
Over 500 lines: the workloads, the tracers, the measurements and the report of one benchmark."""
import contextlib, json, os, re, select, signal, statistics, subprocess, sys, threading, time

mt, storm, here, tmp, fio_file = sys.argv[1:6]
runs, n, batch, fio_secs = (int(a) for a in sys.argv[6:10])
fio_size, sweep, stats = sys.argv[10], sys.argv[11] == "1", sys.argv[12] == "1"
long_runs, long_secs = int(sys.argv[13]), int(sys.argv[14])
chosen_workloads, chosen_variants = sys.argv[15].split(","), sys.argv[16].split(",")
sink_bench = sys.argv[17]
empty = os.path.join(here, "uring_empty.lua")
sys.path.insert(0, here)
from bpf_prog_stats import enable_stats, hold_programs, read_held
from uring_targets import Targets
online = sorted(os.sched_getaffinity(0))
cpu_work, cpu_tracer = online[-1], online[0]
IO_TPS = "io_uring:*"
SYS_TPS = "syscalls:sys_*_io_uring_*"  # enter and exit of setup, register, enter


def log(msg):
    print(f"uring.sh: {msg}", file=sys.stderr, flush=True)


def settle(tracer):
    """moontrace exits at once and leaves closing its probes (an RCU grace
    period each) to a child: wait for it, so runs do not overlap. The
    tracer leads a session of its own, which that child stays in, so other
    people's moontrace processes on a shared machine are not waited for."""
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-s", str(tracer.pid)],
                         stdout=subprocess.DEVNULL).returncode == 0:
        if time.monotonic() > deadline:
            log(f"processes of tracer {tracer.pid}'s session still there after 30 s")
            return
        time.sleep(0.05)


def cpu_seconds(pid):
    """User + system time of a process so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sched(pid):
    """(voluntary context switches, ns spent waiting for a CPU) of all a
    process's threads: how often it slept waiting for data, and how long it
    was runnable but not running."""
    switches = waited = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        switches += int(line.split()[1])
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                waited += int(f.read().split()[1])
        except OSError:
            pass
    return switches, waited


def rss_parts(pid):
    """A running process's resident memory, MB: VmHWM and VmRSS from
    /proc/PID/status, and VmRSS split by mapping (smaps): Clang and LLVM's
    shared libraries, BPF maps mapped in (ring buffers), the rest."""
    parts = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                parts[k] = int(v.split()[0]) / 1024
    split = {"libLLVM + libclang-cpp": 0, "BPF maps (ring buffers)": 0, "other": 0}
    where = "other"
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                path = head[5] if len(head) > 5 else ""
                where = ("libLLVM + libclang-cpp" if re.search(r"lib(LLVM|clang-cpp)", path)
                         else "BPF maps (ring buffers)" if "bpf-map" in path else "other")
            elif head[0] == "Rss:":
                split[where] += int(head[1]) / 1024
    parts.update(split)
    return parts


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# --- workloads: argv to exec, and (requests, requests/s) from a finished run
def fio_argv(out, extra=()):
    return ["fio", "--name=randread", f"--filename={fio_file}", f"--size={fio_size}",
            "--invalidate=0", "--ioengine=io_uring", "--rw=randread", "--bs=4k", "--iodepth=32",
            "--direct=0", "--time_based", f"--runtime={fio_secs}", "--thread",
            "--output-format=json", f"--output={out}", *extra]


def fio_result(out, seconds):
    with open(out) as f:
        text = f.read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    if job["error"]:
        sys.exit(f"uring.sh: fio failed: error {job['error']}")
    return job["read"]["total_ios"], job["read"]["iops"]


def fio_prepare():
    """The file is read whole before each run, so every read hits the page
    cache (fio's --invalidate=0 keeps it there)."""
    with open(fio_file, "rb") as f:
        while f.read(1 << 20):
            pass


def storm_result(out, seconds):
    """nop_storm SECONDSs prints how many NOPs completed."""
    with open(out) as f:
        done = int(re.match(r"(\d+) NOPs in", f.read()).group(1))
    return done, done / seconds


# argv(output path), result(output path, seconds) -> (requests, requests/s),
# prepare(), label; variants: the only ones it runs (None: all).
WORKLOADS = {
    "fio": dict(argv=lambda out: fio_argv(out), result=fio_result, prepare=fio_prepare,
                label=f"fio io_uring randread 4k QD 32, {fio_size} cached file, {fio_secs} s",
                variants=None),
    "nop": dict(argv=lambda out: [storm, str(n), str(batch)],
                result=lambda out, seconds: (n, n / seconds), prepare=lambda: None,
                label=f"nop_storm {n} {batch}", variants=None),
    # Full speed for long: does the tracer keep up, and does its memory stay
    # bounded? The trace goes to /dev/null (gigabytes at full speed).
    "storm30": dict(argv=lambda out: [storm, f"{long_secs}s", str(batch)], result=storm_result,
                    prepare=lambda: None, variants=["mt"],
                    label=f"nop_storm {long_secs}s {batch} (full speed for {long_secs} s)"),
}


# --- tracers: argv for a target pid and an output path, readiness, results
def mt_argv(script, out=None, script_args=()):
    return lambda pid, path: [mt, "-p", str(pid)] + (["-o", path] if out else []) + [
        script, *script_args]


BT_TPS = ["tracepoint:io_uring:*", "tracepoint:sched:sched_process_exec",
          "tracepoint:task:task_rename"] + [
    f"tracepoint:syscalls:sys_{d}_io_uring_{c}" for c in ("setup", "register", "enter")
    for d in ("enter", "exit")]
# bpftrace printing what uring.lua draws: the main fields of every event.
BT_PRINT = {
    "io_uring_create": ('fd=%d ctx=%p sq=%u cq=%u flags=%u',
                        "args->fd, args->ctx, args->sq_entries, args->cq_entries, args->flags"),
    "io_uring_submit_req": ('ctx=%p req=%p ud=%llu op=%u flags=%llx sqt=%d %s',
                            "args->ctx, args->req, args->user_data, args->opcode, args->flags, "
                            "args->sq_thread, str(args->op_str)"),
    "io_uring_file_get": ('ctx=%p req=%p ud=%llu fd=%d',
                          "args->ctx, args->req, args->user_data, args->fd"),
    "io_uring_queue_async_work": ('ctx=%p req=%p ud=%llu op=%u flags=%llx rw=%d %s',
                                  "args->ctx, args->req, args->user_data, args->opcode, "
                                  "args->flags, args->rw, str(args->op_str)"),
    "io_uring_poll_arm": ('ctx=%p req=%p ud=%llu op=%u mask=%d events=%d %s',
                          "args->ctx, args->req, args->user_data, args->opcode, args->mask, "
                          "args->events, str(args->op_str)"),
    "io_uring_task_add": ('ctx=%p req=%p ud=%llu op=%u mask=%d %s',
                          "args->ctx, args->req, args->user_data, args->opcode, args->mask, "
                          "str(args->op_str)"),
    "io_uring_defer": ('ctx=%p req=%p ud=%llu op=%u %s',
                       "args->ctx, args->req, args->data, args->opcode, str(args->op_str)"),
    "io_uring_link": ('ctx=%p req=%p target=%p', "args->ctx, args->req, args->target_req"),
    "io_uring_complete": ('ctx=%p req=%p ud=%llu res=%d cflags=%u',
                          "args->ctx, args->req, args->user_data, args->res, args->cflags"),
    "io_uring_fail_link": ('ctx=%p req=%p ud=%llu op=%u link=%p %s',
                           "args->ctx, args->req, args->user_data, args->opcode, args->link, "
                           "str(args->op_str)"),
    "io_uring_req_failed": ('ctx=%p req=%p ud=%llu op=%u flags=%u off=%llu addr=%llx len=%u '
                            'error=%d %s',
                            "args->ctx, args->req, args->user_data, args->opcode, args->flags, "
                            "args->off, args->addr, args->len, args->error, str(args->op_str)"),
    "io_uring_register": ('ctx=%p op=%u files=%u bufs=%u ret=%ld',
                          "args->ctx, args->opcode, args->nr_files, args->nr_bufs, args->ret"),
    "io_uring_short_write": ('ctx=%p fpos=%llu wanted=%llu got=%llu',
                             "args->ctx, args->fpos, args->wanted, args->got"),
    "io_uring_task_work_run": ('count=%u', "args->count"),
    "io_uring_local_work_run": ('ctx=%p count=%d loops=%u', "args->ctx, args->count, args->loops"),
    "io_uring_cqe_overflow": ('ctx=%p ud=%llu res=%d cflags=%u',
                              "args->ctx, args->user_data, args->res, args->cflags"),
    "io_uring_cqring_wait": ('ctx=%p min=%d', "args->ctx, args->min_events"),
}
BT_SYS = {"sys_enter_io_uring_setup": ("entries=%u", "args->entries"),
          "sys_enter_io_uring_register": ("fd=%u op=%u nr=%u",
                                          "args->fd, args->opcode, args->nr_args"),
          "sys_enter_io_uring_enter": ("fd=%u submit=%u min=%u flags=%u",
                                       "args->fd, args->to_submit, args->min_complete, args->flags")}
BT_SYS.update({f"sys_exit_io_uring_{c}": ("ret=%ld", "args->ret")
               for c in ("setup", "register", "enter")})


def bt_floor(pid, path):
    return ["bpftrace", "-e", f'BEGIN {{ printf("ready\\n"); }} '
            f'{", ".join(BT_TPS)} /pid == {pid}/ {{ }}']


def bt_print(pid, path):
    lines = ['BEGIN { printf("ready\\n"); }']
    for cat, table in (("io_uring", BT_PRINT), ("syscalls", BT_SYS)):
        for tp, (fmt, fields) in table.items():
            name = tp.removeprefix("io_uring_").removeprefix("sys_")
            lines.append(f'tracepoint:{cat}:{tp} /pid == {pid}/ {{ '
                         f'printf("%llu %d {name} {fmt}\\n", nsecs, tid, {fields}); }}')
    return ["bpftrace", "-o", path, "-e", "\n".join(lines)]


def perf_argv(pid, path):
    return ["perf", "record", "-D", "-1", "--control", f"fifo:{path}.ctl,{path}.ack",
            "-e", IO_TPS, "-e", SYS_TPS, "-p", str(pid), "-o", path]


# (key, label, tool, argv(pid, output path) or None, writes output)
VARIANTS = [
    ("untraced", "untraced", None, None, False),
    ("mt_floor", "floor: moontrace, empty programs", "moontrace", mt_argv(empty), False),
    # The same with tp_btf programs on the io_uring tracepoints.
    ("mt_floor_btf", "floor: moontrace, empty tp_btf programs", "moontrace",
     mt_argv(empty, script_args=["--tp_btf"]), False),
    ("bt_floor", "floor: bpftrace, empty actions", "bpftrace", bt_floor, False),
    ("mt", "`moontrace uring`", "moontrace", mt_argv("uring", out=True), True),
    # The same trace gzipped as it is written (-o FILE.gz).
    ("mt_gz", "`moontrace uring -o ….fxt.gz`", "moontrace", mt_argv("uring", out=True), True),
    ("perf", "`perf record`", "perf", perf_argv, True),
    ("bt", "bpftrace printf", "bpftrace", bt_print, True),
]


def running(proc):
    """Whether proc is still running, without reaping it (wait4 does that)."""
    return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def reader(stream, lines, ready, marker):
    for raw in stream:
        line = raw.decode(errors="replace").rstrip("\n")
        lines.append(line)
        if marker and not ready.is_set() and marker(line):
            ready.set()


def wait_ready(tool, tracer, path, out, err, ready, label):
    """Blocks until the tracer has attached every probe."""
    deadline = time.monotonic() + 120
    if tool == "perf":
        # Started with events disabled: enable them, wait for the ack.
        ctl = None
        while ctl is None:
            try:
                ctl = os.open(path + ".ctl", os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                if not running(tracer) or time.monotonic() > deadline:
                    return False
                time.sleep(0.02)
        ack = os.open(path + ".ack", os.O_RDONLY | os.O_NONBLOCK)
        os.write(ctl, b"enable\n")
        got = b""
        while b"ack" not in got:
            r, _, _ = select.select([ack], [], [], 0.5)
            if r:
                got += os.read(ack, 64)
            if not running(tracer) or time.monotonic() > deadline:
                return False
        os.close(ctl)
        os.close(ack)
        return True
    while not ready.wait(0.05):
        if tool == "bpftrace" and path:
            # With -o FILE, BEGIN's line waits in bpftrace's buffer; its
            # event loop, which starts once every probe is attached, is the
            # only epoll_wait it makes.
            try:
                with open(f"/proc/{tracer.pid}/wchan") as f:
                    if f.read() == "do_epoll_wait":
                        return True
            except OSError:
                pass
        if not running(tracer) or time.monotonic() > deadline:
            return False
    return True


def reap(tracer, label):
    """Waits up to 30 s for the tracer: (rusage or None if it hung, exit code)."""
    deadline = time.monotonic() + 30
    while True:
        pid, status, usage = os.wait4(tracer.pid, os.WNOHANG)
        if pid:
            tracer.returncode = os.waitstatus_to_exitcode(status)
            return usage, tracer.returncode
        if time.monotonic() > deadline:
            try:
                with open(f"/proc/{tracer.pid}/wchan") as f:
                    where = f.read()
            except OSError:
                where = "?"
            log(f"{label}: tracer still running 30 s after SIGINT (wchan {where}); killed")
            os.kill(tracer.pid, signal.SIGKILL)
            _, status, usage = os.wait4(tracer.pid, 0)
            tracer.returncode = -9
            return None, -9
        time.sleep(0.02)


def count_fxt_records(path):
    """Records in an FXT file as `moontrace dump` prints them (one a line;
    string records are not printed), and whether it read to the end."""
    p = subprocess.Popen([mt, "dump", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = 0
    while chunk := p.stdout.read(1 << 20):
        lines += chunk.count(b"\n")
    err = p.stderr.read().decode(errors="replace").strip()
    return lines, (p.wait() == 0 and not err), err


def perf_counts(path):
    """(samples, lost samples) from perf report --stats: the sums of the
    per-event sections (after the aggregated one, whose LOST_SAMPLES line
    counts records, not samples)."""
    r = subprocess.run(["perf", "report", "-i", path, "--stats"], capture_output=True, text=True)
    samples, lost, per_event = 0, 0, False
    for line in r.stdout.splitlines():
        if line.rstrip().endswith(" stats:"):
            per_event = not line.lstrip().startswith("Aggregated")
        m = re.match(r"\s*(SAMPLE|LOST_SAMPLES) events:\s+(\d+)", line)
        if m and per_event:
            if m.group(1) == "SAMPLE":
                samples += int(m.group(2))
            else:
                lost += int(m.group(2))
    if not samples:
        log(f"perf report --stats found no samples in {path}: {r.stderr.strip()}")
        return None, None
    return samples, lost


class RssSampler(threading.Thread):
    """VmRSS of a process every half second while the workload runs: how
    the tracer's memory moves over a long run (ru_maxrss gives its peak)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.samples, self.stop = pid, [], threading.Event()
        self.t0 = time.monotonic()

    def run(self):
        while not self.stop.wait(0.5):
            try:
                with open(f"/proc/{self.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            self.samples.append((time.monotonic() - self.t0,
                                                 int(line.split()[1]) / 1024))
            except OSError:
                return


def run(wkey, vkey, out_path=None, throttle=None, count=None, stats=False):
    """One run: a dict of measurements. stats: moontrace with -v, and the
    kernel's run time of each of its BPF programs (BPF_ENABLE_STATS).
    out_path os.devnull: the trace is thrown away (no size, no check).
    A tracer that fails or does not attach gives a run with "failed" set
    (and no rate), so the report still prints."""
    w = WORKLOADS[wkey]
    _, label, tool, argv, writes = next(v for v in VARIANTS if v[0] == vkey)
    label = f"{wkey}: {label}"
    w["prepare"]()
    wout = os.path.join(tmp, "workload.out")
    path = out_path or os.path.join(tmp, f"{vkey}.out" + (".gz" if vkey.endswith("_gz") else ""))
    discard = path == os.devnull
    for p in ([] if discard else [path]) + [path + ".ctl", path + ".ack", wout]:
        if os.path.exists(p):
            os.unlink(p)
    if tool == "perf":
        os.mkfifo(path + ".ctl")
        os.mkfifo(path + ".ack")
    wargv = w["argv"](wout) if count is None else [storm, str(count), str(batch)]
    r, wfd = os.pipe()
    child = os.fork()
    if child == 0:  # the workload, held until the tracer is attached
        try:
            os.close(wfd)
            os.sched_setaffinity(0, {cpu_work})
            if throttle:
                with open(os.path.join(throttle, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
            os.read(r, 1)
            # fio writes its JSON to wout itself; nop_storm SECONDSs its count.
            stdout = os.open(os.devnull if wargv[0] == "fio" else wout,
                             os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(stdout, 1)
            os.execvp(wargv[0], wargv)
        finally:
            os._exit(127)
    os.close(r)
    tracer, out, err = None, [], []
    stack = contextlib.ExitStack()
    if argv:
        marker = {"moontrace": lambda l: re.match(r"moontrace: attached \d+ probes?", l),
                  "bpftrace": lambda l: l == "ready"}.get(tool)
        cmd = argv(child, path)
        if stats:
            cmd.insert(1, "-v")
            stack.enter_context(enable_stats())
        tracer = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  preexec_fn=lambda: os.sched_setaffinity(0, {cpu_tracer}))
        ready = threading.Event()
        threads = [threading.Thread(target=reader, args=(tracer.stdout, out, ready, marker)),
                   threading.Thread(target=reader, args=(tracer.stderr, err, ready, marker))]
        for t in threads:
            t.start()
        if not wait_ready(tool, tracer, path, out, err, ready, label):
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            os.close(wfd)
            os.kill(tracer.pid, signal.SIGKILL)  # a zombie until reaped: no other process's pid
            os.wait4(tracer.pid, 0)
            for t in threads:
                t.join()
            stack.close()
            settle(tracer)
            why = "\n".join(out + err)
            log(f"{label}: tracer did not attach:\n{why}")
            return dict(rate=None, failed=f"did not attach: {why[-300:]}", hung=False)
    load = load1()
    # Held from now: moontrace may unload its programs as soon as its
    # target exits, before they could be read.
    held = hold_programs(tracer.pid) if stats and tracer else []
    cpu_before = cpu_seconds(tracer.pid) if tracer else 0
    sched_before = sched(tracer.pid) if tracer else (0, 0)
    sampler = RssSampler(tracer.pid) if tracer else None
    if sampler:
        sampler.start()
    t0 = time.perf_counter_ns()
    os.write(wfd, b"x")
    _, status = os.waitpid(child, 0)
    seconds = (time.perf_counter_ns() - t0) / 1e9
    os.close(wfd)
    if sampler:
        sampler.stop.set()
        sampler.join()
    res = dict(rate=None, load=load, seconds=seconds, hung=False)
    if os.waitstatus_to_exitcode(status) != 0:
        res["failed"] = f"the workload failed ({os.waitstatus_to_exitcode(status)})"
        log(f"{label}: {res['failed']}")
    else:
        try:
            res["requests"], res["rate"] = (w["result"](wout, seconds) if count is None
                                            else (count, count / seconds))
        except (OSError, ValueError, KeyError, AttributeError) as e:
            res["failed"] = f"the workload's result could not be read ({e!r})"
            log(f"{label}: {res['failed']}")
    if not tracer:
        return res
    res["rss_series"] = sampler.samples
    if stats:
        res["progs"] = read_held(held)
        stack.close()
    if running(tracer):  # perf stops by itself when its target exits
        try:
            res["rss_parts"] = rss_parts(tracer.pid)
            switches, waited = sched(tracer.pid)
            res["wakeups"] = switches - sched_before[0]
            res["waited_ms"] = (waited - sched_before[1]) / 1e6
        except OSError:
            pass
        # Not Popen.send_signal: it polls first, and that would reap a tracer
        # that just stopped by itself (its target exited) before wait4 can
        # read its rusage. Unreaped, the pid cannot be another process's.
        os.kill(tracer.pid, signal.SIGINT)
    stack.close()
    usage, rc = reap(tracer, label)
    for t in threads:
        t.join()
    settle(tracer)
    text = "\n".join(out + err)
    res["attached"] = re.findall(r"(?m)^moontrace: attached (\S+)$", text)
    res["hung"] = usage is None
    # Peak RSS of the tracer process itself (wait4's ru_maxrss; it would also
    # count children the tracer reaped, and these tracers reap none). A
    # tracer killed because it hung keeps its highest sampled VmRSS.
    sampled = max((mb for _, mb in res["rss_series"]), default=None)
    if usage:
        res["rss_mb"] = usage.ru_maxrss / 1024
        res["cpu_s"] = usage.ru_utime + usage.ru_stime - cpu_before
    elif sampled is not None:
        res["rss_mb"] = max(sampled, res.get("rss_parts", {}).get("VmHWM", 0))
    if rc not in (0, -9) and not (tool != "moontrace" and rc == -signal.SIGINT):
        res["failed"] = f"tracer exited with {rc}: {text[-300:]}"
        log(f"{label}: tracer exited with {rc}:\n{text}")
    if not writes or res.get("failed"):
        return res
    res["bytes"] = None if discard else os.path.getsize(path) if os.path.exists(path) else 0
    if tool == "moontrace":
        # Only the summary line, which every moontrace prints at exit.
        m = re.search(r"(?m)^moontrace: (\d+) events, (\d+) lost", text)
        res["events"], res["lost"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        if not m:
            log(f"{label}: no `moontrace: N events, M lost` line:\n{text}")
        if not discard:
            res["records"], ok, why = count_fxt_records(path)
            if not ok:
                log(f"{label}: moontrace dump says the trace is damaged: {why}")
                res["damaged"] = why
        res["lost_by_probe"] = re.findall(r"lost (\d+) from (\S+)", text)
    elif tool == "perf":
        res["events"], res["lost"] = perf_counts(path)
        if res["events"] is None:  # it traced nothing: its rate is no measure of its cost
            res["failed"] = "perf record wrote no samples"
    elif tool == "bpftrace":
        with open(path, "rb") as f:
            data = f.read()
        res["events"] = len(re.findall(rb"(?m)^\d+ ", data))
        lost = [int(x) for x in re.findall(rb"Lost (\d+) events", data + text.encode())]
        res["lost"] = sum(lost)
    if out_path is None:
        os.unlink(path)
    return res


def hits_per_request(wkey):
    """Tracepoint hits a request causes untraced, from perf stat counting."""
    w = WORKLOADS[wkey]
    w["prepare"]()
    wout = os.path.join(tmp, "count.json")
    t0 = time.perf_counter()
    r = subprocess.run(["perf", "stat", "-x", ",", "-e", IO_TPS, "-e", SYS_TPS, "--",
                        "taskset", "-c", str(cpu_work)] + w["argv"](wout),
                       capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    try:
        requests, _ = w["result"](wout, seconds)
    except (OSError, ValueError, KeyError, AttributeError) as e:
        log(f"{wkey}: perf stat's run gave no result ({e!r}): {r.stderr[-500:]}")
        return {}
    hits = {}
    for line in r.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[0].isdigit() and int(f[0]):
            hits[f[2].split(":", 1)[1]] = int(f[0]) / requests
    if not hits:
        log(f"{wkey}: perf stat counted no tracepoint hits (exit {r.returncode}): "
            f"{r.stderr[-500:]}")
    return hits


# ---------------------------------------------------------------- main runs
def fmt(x, spec, none="n/a"):
    return none if x is None else format(x, spec)


med = lambda xs: statistics.median(xs) if xs else None
rate_text = lambda res: fmt(res.get("rate"), ",.0f", res.get("failed", "no rate")[:60])

if "fio" in chosen_workloads:
    fio_prepare_once = open(fio_file, "r+b")
    size = int(fio_size[:-1]) << {"k": 10, "m": 20, "g": 30}[fio_size[-1].lower()] \
        if fio_size[-1].isalpha() else int(fio_size)
    chunk = os.urandom(1 << 20)
    while fio_prepare_once.tell() < size:
        fio_prepare_once.write(chunk[:size - fio_prepare_once.tell()])
    fio_prepare_once.close()

# The variants each chosen workload runs, in VARIANTS' order.
variants_of = {w: [v[0] for v in VARIANTS if v[0] in chosen_variants
                   and (WORKLOADS[w]["variants"] is None or v[0] in WORKLOADS[w]["variants"])]
               for w in WORKLOADS if w in chosen_workloads}
variants_of = {w: vs for w, vs in variants_of.items() if vs}
short = [w for w in ("fio", "nop") if w in variants_of]  # the interleaved ones
chosen = lambda v: any(v in vs for vs in variants_of.values())

hits = {w: hits_per_request(w) for w in short}
for w in short:  # untimed: warms the page cache and the CPU
    run(w, "untraced")
# Untimed: compiles each script into the object cache, so every measured
# run starts warm (a compiling run maps about 23 MB more of libLLVM).
for v in ("mt_floor", "mt_floor_btf", next((v for v in ("mt", "mt_gz") if chosen(v)), None)):
    if v and chosen(v):
        run("nop", v, count=1000)
samples = {w: {v: [] for v in vs} for w, vs in variants_of.items()}
keep = {w: os.path.join(tmp, f"{w}.fxt") for w in short}
total = runs * sum(len(variants_of[w]) for w in short) + (
    long_runs * len(variants_of["storm30"]) if "storm30" in variants_of else 0)
done = 0
for rnd in range(runs):
    for w in short:
        # Interleave, rotating the order so no variant always follows another.
        vs = variants_of[w]
        for k in range(len(vs)):
            vkey = vs[(rnd + k) % len(vs)]
            samples[w][vkey].append(run(w, vkey, out_path=keep[w] if vkey == "mt" else None))
            done += 1
            log(f"{done}/{total} {w} {vkey}: {rate_text(samples[w][vkey][-1])} requests/s")
for rnd in range(long_runs if "storm30" in variants_of else 0):
    for vkey in variants_of["storm30"]:
        samples["storm30"][vkey].append(run("storm30", vkey, out_path=os.devnull))
        done += 1
        log(f"{done}/{total} storm30 {vkey}: {rate_text(samples['storm30'][vkey][-1])} "
            f"requests/s, lost {samples['storm30'][vkey][-1].get('lost')}")

# One more run of moontrace's variants with the kernel's BPF run-time
# accounting on (it slows every program a little, so not in the figures above).
STAT_VARIANTS = ("mt_floor", "mt_floor_btf", "mt")
prog_runs = {w: {v: run(w, v, stats=True) for v in STAT_VARIANTS if v in variants_of[w]}
             for w in short} if stats else {}
if stats:
    log("BPF run-time accounting: done")


def tracepoint_of(probe):
    """tracepoint:io_uring:X and tp_btf:X name the same tracepoint."""
    probe = probe.removeprefix("tracepoint:")
    if probe.startswith("tp_btf:"):
        name = probe.removeprefix("tp_btf:")
        return ("io_uring:" if name.startswith("io_uring_") else "") + name
    return probe


def print_prog_stats(w):
    """BPF run time per request, by tracepoint, for the floors and uring."""
    runs_ = {v: r for v, r in prog_runs.get(w, {}).items() if r.get("requests")}
    if not runs_:
        return
    rows, totals = {}, {}
    for v, r in runs_.items():
        totals[v] = [0, 0.0]
        for p in r.get("progs", []):
            m = re.match(r"mt_probe_(\d+)$", p["name"])
            where = tracepoint_of(r["attached"][int(m.group(1))]) \
                if m and int(m.group(1)) < len(r["attached"]) else p["name"] + " (engine)"
            row = rows.setdefault(where, {}).setdefault(v, [0, 0, 0])
            row[0] += 1
            row[1] += p["run_cnt"]
            row[2] += p["run_time_ns"]
            totals[v][0] += 1
            totals[v][1] += p["run_time_ns"] / r["requests"]
    print("BPF run time per request, from the kernel's accounting (BPF_ENABLE_STATS) in one "
          "more run of each (programs run for every process; `mt_is_target` drops the others):\n")
    floors = [v for v in ("mt_floor", "mt_floor_btf") if v in runs_]
    head = {"mt_floor": "floor: ns per request", "mt_floor_btf": "tp_btf floor: ns per request"}
    u_cols = ["`moontrace uring`: programs", "runs per request", "ns per run",
              "ns per request"] if "mt" in runs_ else []
    print("| tracepoint | " + " | ".join([head[v] for v in floors] + u_cols) + " |")
    print("|---|" + "---:|" * (len(floors) + len(u_cols)))
    reqs = {v: r["requests"] for v, r in runs_.items()}
    for where, by in sorted(rows.items(), key=lambda kv: -kv[1].get("mt", [0, 0, 0])[2]):
        if not any(x[1] for x in by.values()):
            continue
        cells = [where] + [f"{by[v][2] / reqs[v]:.0f}" if v in by else "" for v in floors]
        if u_cols:
            u = by.get("mt")
            cells += [f"{u[0]}" if u else "", f"{u[1] / reqs['mt']:.3f}" if u else "",
                      f"{u[2] / u[1]:.0f}" if u and u[1] else "",
                      f"{u[2] / reqs['mt']:.0f}" if u else ""]
        print("| " + " | ".join(cells) + " |")
    label = " and ".join(f"{totals[v][0]}" for v in floors + (["mt"] if u_cols else []))
    cells = [f"all ({label} programs)"] + [f"**{totals[v][1]:.0f}**" for v in floors]
    if u_cols:
        cells += ["", "", "", f"**{totals['mt'][1]:.0f}**"]
    print("| " + " | ".join(cells) + " |")
    multi = {}
    r = runs_.get("mt", {})
    for p in r.get("progs", []):
        m = re.match(r"mt_probe_(\d+)$", p["name"])
        if m and p["run_cnt"] and int(m.group(1)) < len(r["attached"]):
            multi.setdefault(r["attached"][int(m.group(1))], []).append(
                (int(m.group(1)), f"{p['run_time_ns'] / p['run_cnt']:.0f}"))
    for where, each in multi.items():
        if len(each) > 1:
            print(f"\n{tracepoint_of(where)}: {len(each)} programs, ns per run: "
                  + ", ".join(ns for _, ns in sorted(each))
                  + " (in the order uring.lua declares them).")
    print("\nThat run's rates: " + ", ".join(
        f"{dict(mt_floor='floor', mt_floor_btf='tp_btf floor', mt='uring')[v]} {r['rate']:,.0f}"
        for v, r in runs_.items()) + " requests/s"
        + (f"; uring lost {fmt(runs_['mt'].get('lost'), ',')}" if "mt" in runs_ else "") + ".\n")


LABELS = {v[0]: v[1] for v in VARIANTS}
FLOOR_COLUMNS = [("mt_floor", "× floor"), ("mt_floor_btf", "× tp_btf floor"),
                 ("bt_floor", "× bpftrace floor")]


def failures(rs):
    """What a variant's label says about runs that failed, hung or damaged."""
    notes = []
    failed = [r["failed"] for r in rs if r.get("failed")]
    if failed:
        notes.append(f"{len(failed)} run(s) failed: {failed[0][:120]}")
    hung = sum(r.get("hung", False) for r in rs)
    if hung:
        notes.append(f"{hung} run(s) hung on SIGINT, killed")
    damaged = [r["damaged"] for r in rs if r.get("damaged")]
    if damaged:
        notes.append(f"trace damaged: {damaged[0]}")
    return f" ({'; '.join(notes)})" if notes else ""


def tracer_cells(rs, writes):
    """Output and tracer columns of a variant's runs."""
    read = [r for r in rs if not r.get("hung") and not r.get("failed") and r.get("requests")]
    cells = []
    if writes:
        ev = med([r["events"] for r in read if r.get("events") is not None])
        lost = [r["lost"] for r in read if r.get("lost") is not None]
        sized = [r for r in read if r.get("bytes") is not None]
        mb = med([r["bytes"] / 1e6 for r in sized])
        bpe = med([r["bytes"] / r["events"] for r in sized if r.get("events")])
        lossless = [r for r in sized if r.get("lost") == 0]
        bpr = med([r["bytes"] / r["requests"] for r in lossless])
        cells += [fmt(ev, ",.0f"),
                  ("0" if lost and max(lost) == 0 else
                   "n/a" if not lost else
                   f"{min(lost):,}-{max(lost):,} (≤{100 * max(lost) / (max(lost) + ev):.1f}%)"
                   if ev else f"{max(lost):,}"),
                  fmt(mb, ".1f"), fmt(bpe, ".1f"),
                  fmt(bpr, ".0f", "(loss)" if sized else "n/a")]
    else:
        cells += ["", "", "", "", ""]
    peaks = [r["rss_mb"] for r in rs if r.get("rss_mb") is not None]
    cells += [f"{med(peaks):.1f} ({max(peaks):.1f})" if peaks else "n/a",
              fmt(med([r["cpu_s"] / r["requests"] * 1e6 for r in read if "cpu_s" in r]), ".2f"),
              fmt(med([r["wakeups"] / r["requests"] * 1e3 for r in read if "wakeups" in r]),
                  ".1f"),
              fmt(med([r["waited_ms"] for r in read if "waited_ms" in r]), ",.0f")]
    return cells


for w in short:
    s = samples[w]
    ok = {v: [r for r in s[v] if r.get("rate") and not r.get("failed")] for v in s}
    rate = {v: med([r["rate"] for r in ok[v]]) for v in s}
    base = rate.get("untraced")
    added = {v: 1e9 / rate[v] - 1e9 / base if rate[v] and base else None for v in s}
    total_hits = sum(hits[w].values())
    floors = [(v, head) for v, head in FLOOR_COLUMNS if added.get(v)]
    print(f"### {WORKLOADS[w]['label']}\n")
    print("| variant | load, 1 min | requests/s: median (min-max) | ns added per request "
          + "".join(f"| {head} " for _, head in floors) + "|")
    print("|---|---:|---:|---:|" + "---:|" * len(floors))
    for key in s:
        rates = [r["rate"] for r in ok[key]]
        cells = [LABELS[key] + failures(s[key]), fmt(med([r["load"] for r in s[key] if r.get("load")]), ".2f"),
                 f"{rate[key]:,.0f} ({min(rates):,.0f}-{max(rates):,.0f})" if rates else "n/a"]
        if key != "untraced":
            cells.append(fmt(added[key], ",.0f"))
            for floor, _ in floors:
                cells.append("" if key.endswith("floor") or key.endswith("floor_btf")
                             or added[floor] <= 0 or added[key] is None
                             else f"{added[key] / added[floor]:.2f}")
        else:
            cells += [""] * (1 + len(floors))
        print("| " + " | ".join(cells) + " |")
    print()
    print("| variant | events written | lost | output MB | bytes per event | bytes per request "
          "| tracer peak RSS MB: median (max) | tracer CPU, µs per request "
          "| tracer wake-ups per 1k requests | tracer waited for a CPU, ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in s:
        if key != "untraced":
            writes = next(v[4] for v in VARIANTS if v[0] == key)
            print("| " + " | ".join([LABELS[key]] + tracer_cells(s[key], writes)) + " |")
    print()
    print_prog_stats(w)
    print(f"\nTracepoint hits per request, untraced (perf stat): {total_hits:.3f}: "
          + ", ".join(f"{k} {v:.3f}" for k, v in sorted(hits[w].items(), key=lambda kv: -kv[1])))
    mt_runs = [r for r in s.get("mt", []) if r.get("records")]
    if mt_runs:
        by_probe = {}
        for r in mt_runs:
            for k, p in r.get("lost_by_probe", []):
                by_probe[p] = by_probe.get(p, 0) + int(k)
        print(f"moontrace: {med([r['records'] for r in mt_runs]):,.0f} FXT records a run "
              f"(median, as `moontrace dump` counts them), "
              f"{med([r['bytes'] / r['records'] for r in mt_runs]):.1f} bytes per record"
              + (f"; lost by probe, all runs: " + ", ".join(f"{p} {k:,}"
                                                            for p, k in by_probe.items())
                 if by_probe else "") + ".")
    for key in s:
        parts = [r["rss_parts"] for r in s[key] if r.get("rss_parts")]
        if parts:
            print(f"RSS of {LABELS[key]} just before SIGINT, median MB: " + ", ".join(
                f"{k} {med([p[k] for p in parts if k in p]):.1f}" for k in parts[0]) + ".")
    last = s.get("mt", [{}])[-1]
    if last.get("requests") and os.path.exists(keep[w]):
        print(f"\nWhere the bytes of the last run's trace go (bench/fxt_bytes.py):\n")
        r = subprocess.run([sys.executable, os.path.join(here, "fxt_bytes.py"), keep[w],
                            "--requests", str(last["requests"])], capture_output=True, text=True)
        print(r.stdout if r.returncode == 0 else f"fxt_bytes.py failed: {r.stderr}")
    if os.path.exists(keep[w]):
        os.unlink(keep[w])
    print()

# ------------------------------------------- the storm at full speed for long
if "storm30" in samples:
    print(f"### {WORKLOADS['storm30']['label']}\n")
    print(f"`moontrace uring` traces the NOP storm for {long_secs} s, its trace thrown away "
          "(`-o /dev/null`); the tracer's resident memory is sampled every half second.\n")
    print("| variant | requests/s | events written | lost | tracer peak RSS MB "
          "| tracer CPU, µs per request | tracer wake-ups per 1k requests "
          "| tracer waited for a CPU, ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, rs in samples["storm30"].items():
        for r in rs:
            c = tracer_cells([r], True)
            print("| " + " | ".join([LABELS[key] + failures([r]), fmt(r.get("rate"), ",.0f"),
                                     c[0], c[1]] + c[5:]) + " |")
    for key, rs in samples["storm30"].items():
        for i, r in enumerate(rs):
            series = r.get("rss_series") or []
            every = max(1, len(series) // 10)
            shown = series[every - 1::every]
            if shown:
                print(f"\nVmRSS of {LABELS[key]}, run {i + 1}, MB at: " + ", ".join(
                    f"{t:.0f} s {mb:.1f}" for t, mb in shown) + ".")
    print()

# ------------------------------------------------- zero-loss rate, moontrace
def cgroup_throttle():
    """A cgroup whose CPU bandwidth can be capped (v2 cpu.max, v1 CFS quota)."""
    mounts = [l.split() for l in open("/proc/mounts")]
    for dev, mnt, fstype, opts, *_ in mounts:
        if fstype == "cgroup2" and os.path.exists(os.path.join(mnt, "cgroup.subtree_control")):
            with open(os.path.join(mnt, "cgroup.subtree_control")) as f:
                if "cpu" in f.read().split():
                    d = os.path.join(mnt, f"moontrace-bench-{os.getpid()}")
                    os.mkdir(d)
                    return d, lambda q: open(os.path.join(d, "cpu.max"), "w").write(
                        f"{int(q * 10000)} 10000")
    for dev, mnt, fstype, opts, *_ in mounts:
        if fstype == "cgroup" and "cpu" in opts.split(","):
            d = os.path.join(mnt, f"moontrace-bench-{os.getpid()}")
            os.mkdir(d)
            open(os.path.join(d, "cpu.cfs_period_us"), "w").write("10000")
            return d, lambda q: open(os.path.join(d, "cpu.cfs_quota_us"), "w").write(
                str(int(q * 10000)))
    return None, None


sweep_best = None
full = [r for r in samples.get("nop", {}).get("mt", []) if r.get("rate")]
if sweep and full:
    full_rate = med([r["rate"] for r in full])
    print("### Highest rate moontrace writes with zero loss\n")
    steps = []
    if all(r.get("lost") == 0 and r.get("events") is not None for r in full):
        ev = med([r["events"] / r["seconds"] for r in full])
        rec = med([r["records"] / r["seconds"] for r in full if r.get("records")])
        mbs = med([r["bytes"] / r["seconds"] / 1e6 for r in full if r.get("bytes")])
        busy = med([r["cpu_s"] / r["seconds"] for r in full if "cpu_s" in r])
        print(f"At full speed nop_storm lost nothing in {len(full)} runs, so no throttle was "
              f"needed: {full_rate:,.0f} requests/s, {ev:,.0f} events/s written "
              f"({fmt(rec, ',.0f')} FXT records/s, {fmt(mbs, '.1f')} MB/s), medians. "
              f"moontrace's CPU time over the workload's time: {fmt(busy, '.0%')} of one CPU "
              f"(it also drains after the workload ends).\n")
    else:
        cg, cap = cgroup_throttle()
        if not cg:
            print("No cgroup with a CPU controller found: the zero-loss search was skipped.\n")
        else:
            try:
                def step(q):
                    cap(q)
                    # Sized for about 2 s at the expected rate.
                    count = max(100000, int(full_rate * q * 2) // batch * batch)
                    sweep_out = os.path.join(tmp, "sweep.fxt")
                    res = run("nop", "mt", count=count, throttle=cg, out_path=sweep_out)
                    if os.path.exists(sweep_out):
                        os.unlink(sweep_out)
                    res["quota"] = q
                    steps.append(res)
                    log(f"sweep: CPU quota {q:.0%}: {rate_text(res)} requests/s, "
                        f"{fmt(res.get('lost'), ',')} lost")
                    return res.get("lost") == 0 and res.get("events") is not None \
                        and res.get("rate") is not None
                lo, hi, q = None, 1.0, 0.5
                while lo is None and q >= 0.02:
                    if step(q):
                        lo = q
                    else:
                        hi, q = q, q / 2
                for _ in range(3 if lo else 0):
                    mid = (lo + hi) / 2
                    if step(mid):
                        lo = mid
                    else:
                        hi = mid
            finally:
                os.rmdir(cg)
            print("| nop_storm CPU quota | requests/s | events written/s | MB/s of trace | lost |")
            print("|---:|---:|---:|---:|---:|")
            per_s = lambda r, k: r[k] / r["seconds"] if r.get(k) is not None else None
            for r in sorted(steps, key=lambda r: r["quota"]):
                print(f"| {r['quota']:.0%} | {rate_text(r)} | {fmt(per_s(r, 'events'), ',.0f')} "
                      f"| {fmt(per_s(r, 'bytes') and per_s(r, 'bytes') / 1e6, '.1f')} "
                      f"| {fmt(r.get('lost'), ',')} |")
            sweep_best = max((r for r in steps if r.get("lost") == 0 and r.get("rate")
                              and r.get("events") is not None),
                             key=lambda r: r["rate"], default=None)
            fio = [r for r in samples.get("fio", {}).get("mt", [])
                   if r.get("lost") == 0 and r.get("events") is not None]
            print()
            if sweep_best:
                b = sweep_best
                print(f"Highest zero-loss rate found: {b['rate']:,.0f} NOPs/s, "
                      f"{b['events'] / b['seconds']:,.0f} events/s written "
                      f"({fmt(per_s(b, 'bytes') and per_s(b, 'bytes') / 1e6, '.1f')} MB/s), "
                      "one run per step.")
            else:
                print("No step of the search was free of loss.")
            if fio:
                r = max(fio, key=lambda r: r["events"] / r["seconds"])
                print(f"fio at full speed lost nothing in {len(fio)}/{len(samples['fio']['mt'])} "
                      f"runs; its best: {r['events'] / r['seconds']:,.0f} events/s written.")
            print()

# ------------------------------------------------------------ the sink alone
sink = None
if sink_bench != "none":
    # One CPU, the tracer's, with nothing else of ours running.
    r = subprocess.run([sink_bench], capture_output=True, text=True,
                       preexec_fn=lambda: os.sched_setaffinity(0, {cpu_tracer}))
    text = r.stdout + r.stderr
    m = re.search(r"ns per record:((?:\s+[\d.]+)+)", text)
    if r.returncode == 0 and m:
        sink = {"ns": [float(x) for x in m.group(1).split()]}
    else:
        sink = {"error": f"fxt_sink_bench gave no `ns per record:` line (exit {r.returncode})"}
    print(f"### The sink alone\n\n`{os.path.basename(sink_bench)}` (defaults), on CPU "
          f"{cpu_tracer}:\n\n```\n{text.strip()}\n```\n")

print(f"""Load average after: {open('/proc/loadavg').read().split()[0]}.

Method: the workload is forked, pinned to CPU {cpu_work} and held on a pipe; the tracer
starts pinned to CPU {cpu_tracer} with the workload's pid as its target, and is waited for
until attached (moontrace's `moontrace: attached` line; bpftrace's BEGIN printf, or with
`-o FILE` its event loop's epoll_wait; perf record starts with its events disabled
(`-D -1`) and is enabled through `--control`, which acknowledges); then the workload is
released. fio's figure is its own IOPS (JSON output); nop_storm's is the NOPs it completed
divided by the time from release to reaping it. ns added per request = 1e9/rate - 1e9/rate
untraced (medians); × floor divides that by the floor's. After the workload, the tracer gets
SIGINT (perf stops by itself) and is reaped: peak RSS is the tracer process's own ru_maxrss
(wait4; none of these tracers has children of its own to reap), CPU its user + system time
from the release to its exit (the BPF programs run in the workload, not in it); from the
release to the end of the workload, wake-ups are its threads' voluntary context switches
and "waited for a CPU" their run-queue time (/proc/PID/task/*/schedstat). Events
written: moontrace's count (`moontrace: N events`), perf's samples (`perf report --stats`),
bpftrace's output lines. Lost: moontrace's summary, perf's LOST_SAMPLES (per event,
summed), bpftrace's `Lost N events`. Bytes per request only where nothing was lost.
Tracepoint hits per request: an extra untraced run under
`perf stat -e {IO_TPS} -e {SYS_TPS}`.
- untraced: `{' '.join(WORKLOADS['fio']['argv']('OUT')).replace(fio_file, 'FILE')}`,
  `nop_storm {n} {batch}` and `nop_storm {long_secs}s {batch}` (NOPs for {long_secs} s)
- floor, moontrace: `moontrace -p PID bench/uring_empty.lua` (classic tracepoints), and
  `… bench/uring_empty.lua --tp_btf` (tp_btf programs on the 17 io_uring tracepoints)
- floor, bpftrace: `{bt_floor('PID', '')[2]}`
- moontrace: `moontrace -p PID -o {os.path.dirname(tmp)}/….fxt uring`, and with `-o ….fxt.gz`;
  on the {long_secs}-s storm `-o /dev/null`
- perf: `{' '.join(perf_argv('PID', 'FILE'))}`
- bpftrace: `bpftrace -o FILE -e '…'`, a printf of the fields uring.lua draws on each
  tracepoint, e.g. `{bt_print('PID', 'FILE')[4].splitlines()[2]}`""")
if sweep:
    print("""- zero loss: nop_storm runs in a cgroup whose CPU bandwidth is capped (CFS quota, 10 ms
  period), so it runs in bursts of at most quota × 10 ms; the quota halves from 50% until
  nothing is lost, then 3 bisection steps.""")
if sink:
    print(f"- the sink: `{sink_bench}` with its defaults, pinned to CPU {cpu_tracer}; records/s "
          "= 1e9 / its ns per record")

# ---------------------------------------------------------- against targets
print(f"""
### Against the targets

Each figure is a median of {runs} run(s); "worst run" is moontrace's worst run against the
medians of the others (untraced, floors, perf): its slowest run for a cost; its largest loss,
peak RSS and bytes per request; fxt_sink_bench's slowest round. Met: the median and the
worst run both meet the target. The floor is the classic-tracepoint one, as the targets define
it; the tp_btf floor is beside it.
""")
print("\n".join(Targets(
    samples, {w: WORKLOADS[w]["label"] for w in WORKLOADS},
    {v[0]: v[1] for v in VARIANTS if v[2] == "moontrace"}, hits=hits, sink=sink,
    sweep_best=sweep_best,
    long_label=f"NOP storm at full speed for {long_secs} s").lines()))
