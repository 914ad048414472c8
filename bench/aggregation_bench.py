#!/usr/bin/env python3
"""The driver of bench/aggregation.sh: times in-kernel aggregations against bpftrace.
Arguments come from the shell script, in its order."""
import json, os, re, signal, statistics, subprocess, sys, threading, time

mt, storm, here = sys.argv[1:4]
rounds, n, batch = (int(a) for a in sys.argv[4:7])
script = os.path.join(here, "aggregation_probe.lua")
TP = "tracepoint:io_uring:io_uring_complete"



def settle():
    """moontrace exits at once and leaves closing its probes (an RCU grace
    period each) to a child: wait for it, so runs do not overlap."""
    while subprocess.run(["pgrep", "-x", "moontrace"], stdout=subprocess.DEVNULL).returncode == 0:
        time.sleep(0.05)

def moontrace(kind, target=True):
    # -p PID: the same in-kernel target filter as -c (one hash lookup a hit).
    return lambda pid: ([mt, "-f", "json"] + (["-p", str(pid)] if target else [])
                        + [script, "--kind", kind])


def bpftrace(body, target=True):
    # /pid == PID/ mirrors moontrace's target filter; BEGIN's printf comes
    # out of the event loop, which starts once every probe is attached.
    pred = lambda pid: f"/pid == {pid}/ " if target else ""
    return lambda pid: ["bpftrace", "-e",
                        f'{TP} {pred(pid)}{{ {body} }} BEGIN {{ printf("ready\\n"); }}']


def mt_ready(stream, line):
    return stream == "err" and line.startswith("moontrace: attached")


def bt_ready(stream, line):
    return stream == "out" and line == "ready"


def mt_count(out, err):
    """Events the aggregation saw (None if it has none), and loss/drops."""
    total, bad = None, []
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        data = rec.get("data", {})
        if rec["type"] == "map":
            total = sum(r["value"] for r in data["rows"])
        elif rec["type"] == "hist":
            total = sum(b["count"] for r in data["rows"] for b in r["buckets"])
        elif rec["type"] == "lost_events" and data.get("lost"):
            bad.append(f"{data['lost']} lost")
        if data.get("dropped"):
            bad.append(f"{data['dropped']} dropped")
    if "was full" in err:
        bad.append("map full")
    return total, bad


def bt_count(out, err):
    total = None
    for line in out.splitlines():
        m = (re.match(r"^@(?:\[.*\])?: (\d+)$", line)            # @: N, @[k]: N
             or re.match(r"^\[[^\]\)]*[\]\)]\s+(\d+) \|", line))  # hist bucket
        if m:
            total = (total or 0) + int(m.group(1))
    bad = [l for l in err.splitlines() if re.search(r"lost|drop", l, re.I)]
    return total, bad


# (label, tracer argv for a pid or None, attach marker, count parser, floor)
variants = [
    ("untraced", None, None, None, None),
    ("empty program, no target filter (moontrace)", moontrace("empty", False), mt_ready, None, None),
    ("empty program, no filter (bpftrace `{}`)", bpftrace("", False), bt_ready, None, None),
    ("moontrace: empty program (floor)", moontrace("empty"), mt_ready, None, "moontrace"),
    ("moontrace: count", moontrace("count"), mt_ready, mt_count, "moontrace"),
    ("moontrace: count by comm", moontrace("count_comm"), mt_ready, mt_count, "moontrace"),
    ("moontrace: log2 hist of user_data", moontrace("hist"), mt_ready, mt_count, "moontrace"),
    ("bpftrace: empty program (floor)", bpftrace(""), bt_ready, None, "bpftrace"),
    ("bpftrace: `@ = count()`", bpftrace("@ = count();"), bt_ready, bt_count, "bpftrace"),
    ("bpftrace: `@[comm] = count()`", bpftrace("@[comm] = count();"), bt_ready, bt_count, "bpftrace"),
    ("bpftrace: `@ = hist(args->user_data)`", bpftrace("@ = hist(args->user_data);"), bt_ready, bt_count, "bpftrace"),
]
floors = {"moontrace": 3, "bpftrace": 7}


def reader(stream, name, lines, marker, ready):
    for raw in stream:
        line = raw.decode(errors="replace").rstrip("\n")
        lines.append(line)
        if marker and not ready.is_set() and marker(name, line):
            ready.set()


def run(i, cpu):
    """One timed workload on cpu under variant i: (seconds, kernel-side count, problems)."""
    label, argv, marker, count, _ = variants[i]
    r, w = os.pipe()
    child = os.fork()
    if child == 0:  # the workload, held until the tracer is attached
        os.close(w)
        os.sched_setaffinity(0, {cpu})
        os.read(r, 1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(storm, [storm, str(n), str(batch)])
    os.close(r)
    tracer = None
    if argv:
        tracer = subprocess.Popen(argv(child), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err, ready = [], [], threading.Event()
        threads = [threading.Thread(target=reader, args=a) for a in
                   ((tracer.stdout, "out", out, marker, ready),
                    (tracer.stderr, "err", err, marker, ready))]
        for t in threads:
            t.start()
        while not ready.wait(0.1):
            if tracer.poll() is not None:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                for t in threads:
                    t.join()
                sys.exit(f"aggregation.sh: {label}: tracer exited before attaching:\n"
                         + "\n".join(out + err))
    t0 = time.perf_counter_ns()
    os.write(w, b"x")
    _, status = os.waitpid(child, 0)
    t1 = time.perf_counter_ns()
    os.close(w)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"aggregation.sh: {label}: nop_storm failed ({status})")
    total, bad = None, []
    if tracer:
        tracer.send_signal(signal.SIGINT)
        try:
            tracer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            # Seen once with bpftrace 0.17; the timing is already taken.
            try:
                with open(f"/proc/{tracer.pid}/wchan") as f:
                    where = f.read()
            except OSError:
                where = "?"
            print(f"aggregation.sh: {label}: tracer still running 30 s after SIGINT "
                  f"(wchan {where}); killed", file=sys.stderr)
            tracer.kill()
            tracer.wait()
            for t in threads:
                t.join()
            return (t1 - t0) / 1e9, None, ["hung"]
        for t in threads:
            t.join()
        settle()
        if count:
            total, bad = count("\n".join(out), "\n".join(err))
            if total is None:
                sys.exit(f"aggregation.sh: {label}: no aggregation in the output:\n"
                         + "\n".join(out + err))
    return (t1 - t0) / 1e9, total, bad


# CPU 0, where tracers open the tracepoint's perf event, and the last CPU.
online = sorted(os.sched_getaffinity(0))
cpus = [0, online[-1]] if 0 in online and len(online) > 1 else online[:1]
# One untimed round fills the object cache and warms everything up.
for i in range(len(variants)):
    run(i, cpus[-1])
samples = {c: [[] for _ in variants] for c in cpus}
for rnd in range(rounds):
    # Interleave, rotating the order so no variant always follows another.
    for c in (cpus if rnd % 2 == 0 else cpus[::-1]):
        for k in range(len(variants)):
            i = (rnd + k) % len(variants)
            samples[c][i].append(run(i, c))
    if sys.stderr.isatty():
        print(f"\raggregation.sh: round {rnd + 1}/{rounds}", end="", file=sys.stderr, flush=True)
if sys.stderr.isatty():
    print(file=sys.stderr)

med = {c: [statistics.median(t for t, _, _ in s) for s in samples[c]] for c in cpus}
per_cpu = lambda f: " / ".join(f(c) for c in cpus)
names = " / ".join(f"CPU {c}" for c in cpus)
print(f"| variant | elapsed ms, median: {names} | min-max, all CPUs | M events/s: {names} "
      f"| ns/hit over untraced: {names} | ns/hit over its floor: {names} | count = N in every run |")
print("|---|---:|---:|---:|---:|---:|---|")
for i, (label, _, _, count, floor) in enumerate(variants):
    runs = [r for c in cpus for r in samples[c][i]]
    ts = [t for t, _, _ in runs]
    over = lambda ref: per_cpu(lambda c: f"{(med[c][i] - med[c][ref]) / n * 1e9:.1f}")
    over_untraced = "" if i == 0 else over(0)
    over_floor = "" if not floor or floors[floor] == i else over(floors[floor])
    if not count:
        exact = "n/a"
    else:
        hung = sum("hung" in bs for _, _, bs in runs)
        read = [r for r in runs if "hung" not in r[2]]
        wrong = [f"{k:,}" for _, k, _ in read if k != n]
        bad = sorted({b for _, _, bs in read for b in bs})
        exact = f"yes ({len(read)}/{len(read)})" if not wrong and not bad else "NO: " + ", ".join(wrong + bad)
        if hung:
            exact += f"; {hung} run(s) unread: tracer hung on SIGINT"
    print(f"| {label} | {per_cpu(lambda c: f'{med[c][i] * 1e3:.0f}')} "
          f"| {min(ts) * 1e3:.0f}-{max(ts) * 1e3:.0f} "
          f"| {per_cpu(lambda c: f'{n / med[c][i] / 1e6:.2f}')} "
          f"| {over_untraced} | {over_floor} | {exact} |")
