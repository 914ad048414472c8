#!/usr/bin/env bash
# Tracing io_uring (issue 5, points 7 and 8): what `moontrace uring` costs
# a workload, against an empty BPF program on the same tracepoints (the
# floor), perf record and bpftrace, on two workloads:
#   fio: io_uring 4k random reads of a file in the page cache, QD 32;
#   nop: build/tests/nop_storm N BATCH (io_uring NOPs, user_data 1..N).
# moontrace also writes its trace gzipped (-o FILE.gz), as a variant of its
# own. For each tracer: throughput, ns added per request, lost events, output
# size and bytes per event, peak RSS and CPU of the tracer; then the
# highest rate moontrace writes with zero loss. Prints a markdown report.
#
#   sudo bench/uring.sh [MOONTRACE]        (default: build/moontrace)
#   sudo RUNS=5 N=4000000 FIO_SECS=3 bench/uring.sh
#
# RUNS (3) runs of each variant, interleaved; N (2000000) NOPs in batches of
# BATCH (32); FIO_SECS (2) seconds of fio on a FIO_SIZE (256m) file in
# FIO_DIR (/var/tmp: a disk file system); traces go to OUT_DIR (/dev/shm, a
# tmpfs). SWEEP=0 skips the zero-loss search. MOONTRACE_BUFFER_KB is passed
# on to moontrace. The workload runs on the last CPU, tracers on CPU 0.
# Needs root, python3, fio, perf (linux-perf) and Debian's bpftrace.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mt=${1:-$here/../build/moontrace}
storm=${STORM:-$here/../build/tests/nop_storm}
runs=${RUNS:-3}
n=${N:-2000000}
batch=${BATCH:-32}
fio_secs=${FIO_SECS:-2}
fio_size=${FIO_SIZE:-256m}
fio_dir=${FIO_DIR:-/var/tmp}
out_dir=${OUT_DIR:-/dev/shm}
sweep=${SWEEP:-1}

die() { echo "uring.sh: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root (attaching BPF programs needs it)"
[[ -x $mt ]] || die "no moontrace binary at $mt (build it, or pass its path)"
[[ -x $storm ]] || die "no nop_storm at $storm (build the tests, or set STORM)"
for tool in bpftrace perf fio python3; do
  command -v $tool >/dev/null || die "$tool not found (./setup.sh installs it)"
done
for v in runs n batch fio_secs; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "${v^^} must be a positive integer"
done
[[ -d $fio_dir && -d $out_dir ]] || die "FIO_DIR ($fio_dir) and OUT_DIR ($out_dir) must exist"

mt=$(realpath "$mt")
storm=$(realpath "$storm")
tmp=$(mktemp -d "$out_dir/moontrace-uring.XXXXXX")
fio_file=$(mktemp "$fio_dir/moontrace-uring-fio.XXXXXX")
trap 'rm -rf "$tmp" "$fio_file"' EXIT

source "$here/machine.sh"
cat <<EOF
## Tracing io_uring (issue 5)

$(machine_line "$mt")
$(perf --version 2>&1 | head -1); $(fio --version 2>&1 | head -1);
$runs runs of every variant, interleaved; workload on CPU $(($(nproc) - 1)), tracers on CPU 0;
traces in $(df --output=fstype "$out_dir" | tail -1) ($out_dir), fio's file on $(df --output=fstype "$fio_dir" | tail -1) ($fio_dir);
MOONTRACE_BUFFER_KB=${MOONTRACE_BUFFER_KB:-default (4096)}; $(date +%F);
load average before: $(cut -d' ' -f1-3 /proc/loadavg).

EOF

MOONTRACE_CACHE=$tmp/cache python3 - "$mt" "$storm" "$here" "$tmp" "$fio_file" "$runs" "$n" \
  "$batch" "$fio_secs" "$fio_size" "$sweep" <<'PY'
import contextlib, json, os, re, select, signal, statistics, subprocess, sys, threading, time

mt, storm, here, tmp, fio_file = sys.argv[1:6]
runs, n, batch, fio_secs = (int(a) for a in sys.argv[6:10])
fio_size, sweep = sys.argv[10], sys.argv[11] == "1"
empty = os.path.join(here, "uring_empty.lua")
sys.path.insert(0, here)
from bpf_prog_stats import enable_stats, programs_of
online = sorted(os.sched_getaffinity(0))
cpu_work, cpu_tracer = online[-1], online[0]
IO_TPS = "io_uring:*"
SYS_TPS = "syscalls:sys_*_io_uring_*"  # enter and exit of setup, register, enter


def log(msg):
    print(f"uring.sh: {msg}", file=sys.stderr, flush=True)


def settle():
    """moontrace exits at once and leaves closing its probes (an RCU grace
    period each) to a child: wait for it, so runs do not overlap."""
    while subprocess.run(["pgrep", "-x", "moontrace"], stdout=subprocess.DEVNULL).returncode == 0:
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


WORKLOADS = {
    "fio": dict(argv=lambda out: fio_argv(out), result=fio_result, prepare=fio_prepare,
                label=f"fio io_uring randread 4k QD 32, {fio_size} cached file, {fio_secs} s"),
    "nop": dict(argv=lambda out: [storm, str(n), str(batch)],
                result=lambda out, seconds: (n, n / seconds), prepare=lambda: None,
                label=f"nop_storm {n} {batch}"),
}


# --- tracers: argv for a target pid and an output path, readiness, results
def mt_argv(script, out=None):
    return lambda pid, path: [mt, "-p", str(pid)] + (["-o", path] if out else []) + [script]


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
            tracer.kill()
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


def run(wkey, vkey, out_path=None, throttle=None, count=None, stats=False):
    """One run: a dict of measurements. stats: moontrace with -v, and the
    kernel's run time of each of its BPF programs (BPF_ENABLE_STATS)."""
    w = WORKLOADS[wkey]
    _, label, tool, argv, writes = next(v for v in VARIANTS if v[0] == vkey)
    label = f"{wkey}: {label}"
    w["prepare"]()
    wout = os.path.join(tmp, "workload.json")
    path = out_path or os.path.join(tmp, f"{vkey}.out" + (".gz" if vkey.endswith("_gz") else ""))
    for p in (path, path + ".ctl", path + ".ack"):
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
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
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
        tracer = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
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
            tracer.kill()
            for t in threads:
                t.join()
            sys.exit(f"uring.sh: {label}: tracer did not attach:\n" + "\n".join(out + err))
    load = load1()
    cpu_before = cpu_seconds(tracer.pid) if tracer else 0
    sched_before = sched(tracer.pid) if tracer else (0, 0)
    t0 = time.perf_counter_ns()
    os.write(wfd, b"x")
    _, status = os.waitpid(child, 0)
    seconds = (time.perf_counter_ns() - t0) / 1e9
    os.close(wfd)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"uring.sh: {label}: workload failed ({status})")
    requests, rate = (w["result"](wout, seconds) if count is None
                      else (count, count / seconds))
    res = dict(rate=rate, requests=requests, load=load, seconds=seconds, hung=False)
    if not tracer:
        return res
    if running(tracer):  # perf stops by itself when its target exits
        if stats:
            res["progs"] = programs_of(tracer.pid)
            stack.close()
        try:
            res["rss_parts"] = rss_parts(tracer.pid)
            switches, waited = sched(tracer.pid)
            res["wakeups"] = switches - sched_before[0]
            res["waited_ms"] = (waited - sched_before[1]) / 1e6
        except OSError:
            pass
        tracer.send_signal(signal.SIGINT)
    stack.close()
    usage, rc = reap(tracer, label)
    for t in threads:
        t.join()
    settle()
    text = "\n".join(out + err)
    res["attached"] = re.findall(r"(?m)^moontrace: attached (\S+)$", text)
    res["hung"] = usage is None
    if usage:
        res["rss_mb"] = usage.ru_maxrss / 1024
        res["cpu_s"] = usage.ru_utime + usage.ru_stime - cpu_before
    if rc not in (0, -9) and not (tool != "moontrace" and rc == -signal.SIGINT):
        sys.exit(f"uring.sh: {label}: tracer exited with {rc}:\n{text}")
    if not writes:
        return res
    res["bytes"] = os.path.getsize(path) if os.path.exists(path) else 0
    if tool == "moontrace":
        m = re.search(r"moontrace: (\d+) events, (\d+) lost", text)
        res["events"], res["lost"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        res["records"], ok, why = count_fxt_records(path)
        if not ok:
            log(f"{label}: moontrace dump says the trace is damaged: {why}")
            res["damaged"] = why
        res["lost_by_probe"] = re.findall(r"lost (\d+) from (\S+)", text)
    elif tool == "perf":
        res["events"], res["lost"] = perf_counts(path)
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
    requests, _ = w["result"](wout, seconds)
    hits = {}
    for line in r.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[0].isdigit() and int(f[0]):
            hits[f[2].split(":", 1)[1]] = int(f[0]) / requests
    return hits


# ---------------------------------------------------------------- main runs
fio_prepare_once = open(fio_file, "r+b")
size = int(fio_size[:-1]) << {"k": 10, "m": 20, "g": 30}[fio_size[-1].lower()] \
    if fio_size[-1].isalpha() else int(fio_size)
chunk = os.urandom(1 << 20)
while fio_prepare_once.tell() < size:
    fio_prepare_once.write(chunk[:size - fio_prepare_once.tell()])
fio_prepare_once.close()

hits = {w: hits_per_request(w) for w in WORKLOADS}
for w in WORKLOADS:  # untimed: warms the page cache and the CPU
    run(w, "untraced")
# Untimed: compiles both scripts into the object cache, so every measured
# run starts warm (a compiling run maps about 23 MB more of libLLVM).
run("nop", "mt_floor", count=1000)
run("nop", "mt", count=1000)
samples = {w: {v[0]: [] for v in VARIANTS} for w in WORKLOADS}
keep = {w: os.path.join(tmp, f"{w}.fxt") for w in WORKLOADS}
total = runs * len(WORKLOADS) * len(VARIANTS)
done = 0
for rnd in range(runs):
    for w in WORKLOADS:
        # Interleave, rotating the order so no variant always follows another.
        for k in range(len(VARIANTS)):
            vkey = VARIANTS[(rnd + k) % len(VARIANTS)][0]
            samples[w][vkey].append(run(w, vkey, out_path=keep[w] if vkey == "mt" else None))
            done += 1
            log(f"{done}/{total} {w} {vkey}: {samples[w][vkey][-1]['rate']:,.0f} requests/s")

# One more run of moontrace's two variants with the kernel's BPF run-time
# accounting on (it slows every program a little, so not in the figures above).
prog_runs = {w: {v: run(w, v, stats=True) for v in ("mt_floor", "mt")} for w in WORKLOADS}
log("BPF run-time accounting: done")

med = lambda xs: statistics.median(xs) if xs else None


def print_prog_stats(w):
    """BPF run time per request, by tracepoint, for the floor and uring."""
    rows, totals = {}, {}
    for v, r in prog_runs[w].items():
        totals[v] = [0, 0.0]
        for p in r.get("progs", []):
            m = re.match(r"mt_probe_(\d+)$", p["name"])
            where = r["attached"][int(m.group(1))] if m and int(m.group(1)) < len(r["attached"]) \
                else p["name"] + " (engine)"
            where = where.removeprefix("tracepoint:")
            row = rows.setdefault(where, {}).setdefault(v, [0, 0, 0])
            row[0] += 1
            row[1] += p["run_cnt"]
            row[2] += p["run_time_ns"]
            totals[v][0] += 1
            totals[v][1] += p["run_time_ns"] / r["requests"]
    print("BPF run time per request, from the kernel's accounting (BPF_ENABLE_STATS) in one "
          "more run of each (programs run for every process; `mt_is_target` drops the others):\n")
    print("| tracepoint | floor: programs | ns per request | `moontrace uring`: programs "
          "| runs per request | ns per run | ns per request |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    reqs = {v: r["requests"] for v, r in prog_runs[w].items()}
    for where, by in sorted(rows.items(), key=lambda kv: -kv[1].get("mt", [0, 0, 0])[2]):
        f, u = by.get("mt_floor"), by.get("mt")
        if not any(x and x[1] for x in (f, u)):
            continue
        cells = [where, f"{f[0]}" if f else "", f"{f[2] / reqs['mt_floor']:.0f}" if f else "",
                 f"{u[0]}" if u else "", f"{u[1] / reqs['mt']:.3f}" if u else "",
                 f"{u[2] / u[1]:.0f}" if u and u[1] else "", f"{u[2] / reqs['mt']:.0f}" if u else ""]
        print("| " + " | ".join(cells) + " |")
    multi = {}
    r = prog_runs[w]["mt"]
    for p in r.get("progs", []):
        m = re.match(r"mt_probe_(\d+)$", p["name"])
        if m and p["run_cnt"] and int(m.group(1)) < len(r["attached"]):
            multi.setdefault(r["attached"][int(m.group(1))], []).append(
                (int(m.group(1)), f"{p['run_time_ns'] / p['run_cnt']:.0f}"))
    print(f"| all ({totals['mt_floor'][0]} and {totals['mt'][0]} programs) | | "
          f"**{totals['mt_floor'][1]:.0f}** | | | | **{totals['mt'][1]:.0f}** |")
    for where, each in multi.items():
        if len(each) > 1:
            print(f"\n{where.removeprefix('tracepoint:')}: {len(each)} programs, ns per run: "
                  + ", ".join(ns for _, ns in sorted(each))
                  + " (in the order uring.lua declares them).")
    print(f"\nThat run's rates: floor {prog_runs[w]['mt_floor']['rate']:,.0f}, uring "
          f"{prog_runs[w]['mt']['rate']:,.0f} requests/s; lost "
          f"{prog_runs[w]['mt'].get('lost', 'n/a')}.\n")


def fmt(x, spec, none="n/a"):
    return none if x is None else format(x, spec)


for w, wl in WORKLOADS.items():
    s = samples[w]
    rate = {v: med([r["rate"] for r in s[v]]) for v in s}
    ns = {v: 1e9 / rate[v] for v in s}
    added = {v: ns[v] - ns["untraced"] for v in s}
    total_hits = sum(hits[w].values())
    print(f"### {wl['label']}\n")
    print("| variant | load, 1 min | requests/s: median (min-max) | ns added per request "
          "| × floor (moontrace) | × floor (bpftrace) |")
    print("|---|---:|---:|---:|---:|---:|")
    for key, label, tool, _, writes in VARIANTS:
        rates = [r["rate"] for r in s[key]]
        cells = [label, fmt(med([r["load"] for r in s[key]]), ".2f"),
                 f"{rate[key]:,.0f} ({min(rates):,.0f}-{max(rates):,.0f})"]
        if key != "untraced":
            cells.append(f"{added[key]:,.0f}")
            for floor in ("mt_floor", "bt_floor"):
                cells.append("" if key == floor or added[floor] <= 0
                             else f"{added[key] / added[floor]:.1f}")
        else:
            cells += ["", "", ""]
        print("| " + " | ".join(cells) + " |")
    print()
    print("| variant | events written | lost | output MB | bytes per event | bytes per request "
          "| tracer peak RSS MB | tracer CPU, µs per request | tracer wake-ups per 1k requests "
          "| tracer waited for a CPU, ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key, label, tool, _, writes in VARIANTS:
        rs = s[key]
        if key == "untraced":
            continue
        read = [r for r in rs if not r["hung"]]
        cells = [label]
        if writes:
            ev = med([r["events"] for r in read if r.get("events") is not None])
            lost = [r["lost"] for r in read if r.get("lost") is not None]
            mb = med([r["bytes"] / 1e6 for r in read])
            bpe = med([r["bytes"] / r["events"] for r in read if r.get("events")])
            lossless = [r for r in read if r.get("lost") == 0]
            bpr = med([r["bytes"] / r["requests"] for r in lossless])
            cells += [fmt(ev, ",.0f"),
                      ("0" if lost and max(lost) == 0 else
                       "n/a" if not lost else
                       f"{min(lost):,}-{max(lost):,} (≤{100 * max(lost) / (max(lost) + ev):.0f}%)"
                       if ev else f"{max(lost):,}"),
                      fmt(mb, ".1f"), fmt(bpe, ".1f"), fmt(bpr, ".0f", "(loss)")]
        else:
            cells += ["", "", "", "", ""]
        cells += [fmt(max([r["rss_mb"] for r in read], default=None), ".1f"),
                  fmt(med([r["cpu_s"] / r["requests"] * 1e6 for r in read]), ".2f"),
                  fmt(med([r["wakeups"] / r["requests"] * 1e3 for r in read if "wakeups" in r]),
                      ".1f"),
                  fmt(med([r["waited_ms"] for r in read if "waited_ms" in r]), ",.0f")]
        hung = sum(r["hung"] for r in rs)
        if hung:
            cells[0] += f" ({hung} run(s) hung on SIGINT, killed)"
        damaged = [r["damaged"] for r in rs if r.get("damaged")]
        if damaged:
            cells[0] += f" (trace damaged: {damaged[0]})"
        print("| " + " | ".join(cells) + " |")
    print()
    print_prog_stats(w)
    mt_runs = s["mt"]
    by_probe = {}
    for r in mt_runs:
        for k, p in r.get("lost_by_probe", []):
            by_probe[p] = by_probe.get(p, 0) + int(k)
    print(f"\nTracepoint hits per request, untraced (perf stat): {total_hits:.3f}: "
          + ", ".join(f"{k} {v:.3f}" for k, v in sorted(hits[w].items(), key=lambda kv: -kv[1])))
    print(f"moontrace: {med([r['records'] for r in mt_runs]):,.0f} FXT records a run "
          f"(median, as `moontrace dump` counts them), "
          f"{med([r['bytes'] / r['records'] for r in mt_runs]):.1f} bytes per record"
          + (f"; lost by probe, all runs: " + ", ".join(f"{p} {k:,}" for p, k in by_probe.items())
             if by_probe else "") + ".")
    for key, label, tool, _, _ in VARIANTS:
        parts = [r["rss_parts"] for r in s[key] if r.get("rss_parts")]
        if parts:
            print(f"RSS of {label} just before SIGINT, median MB: " + ", ".join(
                f"{k} {med([p[k] for p in parts if k in p]):.1f}" for k in parts[0]) + ".")
    print(f"\nWhere the bytes of the last run's trace go (bench/fxt_bytes.py):\n")
    last = mt_runs[-1]
    r = subprocess.run([sys.executable, os.path.join(here, "fxt_bytes.py"), keep[w],
                        "--requests", str(last["requests"])], capture_output=True, text=True)
    print(r.stdout if r.returncode == 0 else f"fxt_bytes.py failed: {r.stderr}")
    os.unlink(keep[w])

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


if sweep:
    full = samples["nop"]["mt"]
    full_rate = med([r["rate"] for r in full])
    print("### Highest rate moontrace writes with zero loss\n")
    steps = []
    if all(r["lost"] == 0 for r in full):
        ev = med([r["events"] / r["seconds"] for r in full])
        rec = med([r["records"] / r["seconds"] for r in full])
        mbs = med([r["bytes"] / r["seconds"] / 1e6 for r in full])
        busy = med([r["cpu_s"] / r["seconds"] for r in full])
        print(f"At full speed nop_storm lost nothing in {len(full)} runs, so no throttle was "
              f"needed: {full_rate:,.0f} requests/s, {ev:,.0f} events/s written "
              f"({rec:,.0f} FXT records/s, {mbs:.1f} MB/s), medians. moontrace's CPU time over "
              f"the workload's time: {busy:.0%} of one CPU (it also drains after the workload "
              f"ends).\n")
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
                    res = run("nop", "mt", count=count, throttle=cg,
                              out_path=os.path.join(tmp, "sweep.fxt"))
                    os.unlink(os.path.join(tmp, "sweep.fxt"))
                    res["quota"] = q
                    steps.append(res)
                    log(f"sweep: CPU quota {q:.0%}: {res['rate']:,.0f} requests/s, "
                        f"{res['lost']:,} lost")
                    return res["lost"] == 0
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
            for r in sorted(steps, key=lambda r: r["quota"]):
                print(f"| {r['quota']:.0%} | {r['rate']:,.0f} | {r['events'] / r['seconds']:,.0f} "
                      f"| {r['bytes'] / r['seconds'] / 1e6:.1f} | {r['lost']:,} |")
            best = max((r for r in steps if r["lost"] == 0), key=lambda r: r["rate"], default=None)
            fio = [r for r in samples["fio"]["mt"] if r["lost"] == 0]
            print()
            if best:
                print(f"Highest zero-loss rate found: {best['rate']:,.0f} NOPs/s, "
                      f"{best['events'] / best['seconds']:,.0f} events/s written "
                      f"({best['bytes'] / best['seconds'] / 1e6:.1f} MB/s), one run per step.")
            if fio:
                r = max(fio, key=lambda r: r["events"] / r["seconds"])
                print(f"fio at full speed lost nothing in {len(fio)}/{len(samples['fio']['mt'])} "
                      f"runs; its best: {r['events'] / r['seconds']:,.0f} events/s written.")
            print()

print(f"""Load average after: {open('/proc/loadavg').read().split()[0]}.
Method: the workload is forked, pinned to CPU {cpu_work} and held on a pipe; the tracer
starts pinned to CPU {cpu_tracer} with the workload's pid as its target, and is waited for
until attached (moontrace's `moontrace: attached` line; bpftrace's BEGIN printf, or with
`-o FILE` its event loop's epoll_wait; perf record starts with its events disabled
(`-D -1`) and is enabled through `--control`, which acknowledges); then the workload is
released. fio's figure is its own IOPS (JSON output); nop_storm's is N divided by the time
from release to reaping it. ns added per request = 1e9/rate - 1e9/rate untraced (medians);
× floor divides that by the floor's. After the workload, the tracer gets SIGINT (perf stops
by itself) and is reaped: peak RSS is its ru_maxrss (wait4), CPU its user + system time
from the release to its exit (the BPF programs run in the workload, not in it); from the
release to the end of the workload, wake-ups are its threads' voluntary context switches
and "waited for a CPU" their run-queue time (/proc/PID/task/*/schedstat). Events
written: moontrace's record count (`moontrace: N events`: one per drawn event; a syscall's
enter and exit make one), perf's samples (`perf report --stats`), bpftrace's output lines.
Lost: moontrace's summary, perf's LOST_SAMPLES (per event, summed), bpftrace's `Lost N
events`. Bytes per request only where nothing was lost. Tracepoint hits per request: an
extra untraced run under `perf stat -e {IO_TPS} -e {SYS_TPS}`.
- untraced: `{' '.join(WORKLOADS['fio']['argv']('OUT')).replace(fio_file, 'FILE')}` and
  `nop_storm {n} {batch}`
- floor, moontrace: `moontrace -p PID bench/uring_empty.lua`
- floor, bpftrace: `{bt_floor('PID', '')[2]}`
- moontrace: `moontrace -p PID -o {os.path.dirname(tmp)}/….fxt uring`, and with `-o ….fxt.gz`
- perf: `{' '.join(perf_argv('PID', 'FILE'))}`
- bpftrace: `bpftrace -o FILE -e '…'`, a printf of the fields uring.lua draws on each
  tracepoint, e.g. `{bt_print('PID', 'FILE')[4].splitlines()[2]}`""")
if sweep:
    print("""- zero loss: nop_storm runs in a cgroup whose CPU bandwidth is capped (CFS quota, 10 ms
  period), so it runs in bursts of at most quota × 10 ms; the quota halves from 50% until
  nothing is lost, then 3 bisection steps.""")
PY
