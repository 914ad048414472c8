#!/usr/bin/env python3
"""The driver of bench/startup.sh: times exec to every probe attached.
Arguments come from the shell script, in its order."""
import math, os, re, selectors, statistics, subprocess, sys, tempfile, time

mt, here, runs, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
script = os.path.join(here, "startup.lua")
empty = os.path.join(here, "startup_empty.lua")
warm_cache = os.path.join(tmp, "warm")
os.mkdir(warm_cache)
bt_small = ('tracepoint:io_uring:io_uring_complete { printf("%llu\\n", args->user_data); } '
            'BEGIN { printf("begin\\n"); exit(); }')
bt_empty = 'BEGIN { printf("begin\\n"); exit(); }'



def settle():
    """moontrace exits at once and leaves closing its probes (an RCU grace
    period each) to a child: wait for it, so runs do not overlap."""
    while subprocess.run(["pgrep", "-x", "moontrace"], stdout=subprocess.DEVNULL).returncode == 0:
        time.sleep(0.05)

def mt_attached(stream, line):
    # "moontrace: attached N probes; ..." (earlier: "tracing N probes"),
    # printed right after the last probe is attached, before `begin` runs.
    return stream == "err" and re.match(r"moontrace: \w+ \d+ probes?\b", line) is not None


def bt_attached(stream, line):
    # bpftrace 0.17 runs BEGIN's program before attaching the other probes,
    # but prints its output from the event loop, which starts once every
    # probe is attached.
    return stream == "out" and line == "begin"


def fresh_cache():
    return {"MOONTRACE_CACHE": tempfile.mkdtemp(prefix="cold.", dir=tmp)}


# (label, argv, extra environment per run, attach marker)
variants = [
    ("moontrace, cold cache", [mt, script], fresh_cache, mt_attached),
    ("moontrace, warm cache", [mt, script], lambda: {"MOONTRACE_CACHE": warm_cache}, mt_attached),
    ("bpftrace", ["bpftrace", "-e", bt_small], dict, bt_attached),
    ("moontrace, no kernel probe", [mt, empty], lambda: {"MOONTRACE_CACHE": warm_cache}, mt_attached),
    ("bpftrace, BEGIN only", ["bpftrace", "-e", bt_empty], dict, bt_attached),
    # The flagship: uring's 30-odd probes, until `true` exits.
    ("moontrace uring, cold cache", [mt, "-o", "/dev/null", "-c", "true", "uring"], fresh_cache,
     mt_attached),
    ("moontrace uring, warm cache", [mt, "-o", "/dev/null", "-c", "true", "uring"],
     lambda: {"MOONTRACE_CACHE": warm_cache}, mt_attached),
]


def run_once(argv, extra, marker):
    """Returns (ms to the attach marker or None, ms to exit, CPU ms, rc, output)."""
    env = dict(os.environ, **extra)
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, "out")
    sel.register(p.stderr, selectors.EVENT_READ, "err")
    pending = {"out": b"", "err": b""}
    text = []
    t_mark = None
    while sel.get_map():
        for key, _ in sel.select():
            data = os.read(key.fileobj.fileno(), 65536)
            now = time.perf_counter_ns()
            if not data:
                sel.unregister(key.fileobj)
                continue
            pending[key.data] += data
            *lines, pending[key.data] = pending[key.data].split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace")
                text.append(line)
                if t_mark is None and marker(key.data, line):
                    t_mark = now
    _, status, usage = os.wait4(p.pid, 0)  # usage includes reaped grandchildren
    t1 = time.perf_counter_ns()
    settle()
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stdout.close()
    p.stderr.close()
    ms = lambda t: (t - t0) / 1e6
    cpu = (usage.ru_utime + usage.ru_stime) * 1e3
    return (ms(t_mark) if t_mark is not None else None), ms(t1), cpu, p.returncode, "\n".join(text)


def run(i):
    label, argv, extra, marker = variants[i]
    env = extra()
    attached, total, cpu, rc, out = run_once(argv, env, marker)
    if "MOONTRACE_CACHE" in env and env["MOONTRACE_CACHE"] != warm_cache:
        subprocess.run(["rm", "-rf", env["MOONTRACE_CACHE"]], check=True)
    if rc != 0:
        sys.exit(f"startup.sh: {label} failed (exit {rc}):\n{out}")
    return attached, total, cpu


# One untimed round warms the page cache and fills the warm object cache.
for i in range(len(variants)):
    run(i)
samples = [[] for _ in variants]
for rnd in range(runs):
    # Interleave, rotating the order so no variant always runs after another.
    for k in range(len(variants)):
        i = (rnd + k) % len(variants)
        samples[i].append(run(i))
    if sys.stderr.isatty():
        print(f"\rstartup.sh: round {rnd + 1}/{runs}", end="", file=sys.stderr, flush=True)
if sys.stderr.isatty():
    print(file=sys.stderr)


def pick(xs, q):
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]  # nearest rank


def stats(xs, which=("min", "median", "p90")):
    if None in xs:  # the attach marker was not seen (engine message changed?)
        return ["n/a"] * len(which)
    f = {"min": min, "median": statistics.median, "p90": lambda v: pick(v, 0.9)}
    return [f"{f[w](xs):.1f}" for w in which]


print("| ms | exec to attached: min | median | p90 | exec to exit: min | median | p90 "
      "| exit after attach: median | CPU time: median |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for (label, *_), runs_ in zip(variants, samples):
    att = [a for a, _, _ in runs_]
    tot = [t for _, t, _ in runs_]
    cpu = [c for _, _, c in runs_]
    gap = [t - a if a is not None else None for a, t, _ in runs_]
    cells = stats(att) + stats(tot) + stats(gap, ("median",)) + stats(cpu, ("median",))
    print(f"| {label} | " + " | ".join(cells) + " |")

# Issue 18's targets, on the medians of exec to attached.
median = {label: statistics.median(a for a, _, _ in r) if all(a is not None for a, _, _ in r)
          else None for (label, *_), r in zip(variants, samples)}
targets = [
    ("small script, warm: at most 1/10 of bpftrace's", "moontrace, warm cache", "bpftrace", 0.1),
    ("uring, warm: under bpftrace's BEGIN-only start", "moontrace uring, warm cache",
     "bpftrace, BEGIN only", 1.0),
    ("uring, cold (compile included): under bpftrace's one-liner", "moontrace uring, cold cache",
     "bpftrace", 1.0),
]
print("\n| target | moontrace ms | limit ms | met |")
print("|---|---:|---:|---|")
for what, ours, theirs, share in targets:
    if median[ours] is None or median[theirs] is None:
        print(f"| {what} | n/a | n/a | n/a |")
        continue
    limit = median[theirs] * share
    met = median[ours] <= limit if share < 1 else median[ours] < limit
    print(f"| {what} | {median[ours]:.1f} | {limit:.1f} | {'yes' if met else 'no'} |")
print(f"""
Method: each run is timed from just before fork+exec (python3 subprocess,
perf_counter) to the process being reaped (*exec to exit*); the script's
`begin` handler calls `exit()` and runs only once every probe is attached, so
this is start-up plus teardown. *Exec to attached* is when the attach marker
reaches the pipe: moontrace's stderr line `moontrace: attached N probes` (or
`tracing N probes`), printed right after the last attach; bpftrace's
`printf("begin")` from BEGIN, printed by its event loop, which starts after the
last attach. *Exit after attach* is the per-run difference (teardown, mostly).
*CPU time* is user + system time of the process and its children (wait4).
Cold cache: a fresh empty MOONTRACE_CACHE directory each run (the OS page cache
stays warm); warm cache: a directory filled by an untimed first round.

- moontrace: bench/startup.lua; no kernel probe: bench/startup_empty.lua;
  uring: `moontrace -o /dev/null -c true uring`
- bpftrace: `{bt_small}`
- bpftrace, BEGIN only: `{bt_empty}`""")
