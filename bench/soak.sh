#!/usr/bin/env bash
# Soak test (not in CI): `moontrace uring` traces a
# looping io_uring workload for DURATION seconds, and moontrace's resident
# memory is sampled every INTERVAL seconds. Memory must stay flat however
# long the trace: the report compares the first minute with the last and
# the middle of the run with its end (flat: no growth in the second half),
# and gives the peak and the size of the trace. Prints a markdown report.
#
#   sudo bench/soak.sh [MOONTRACE]              (default: build/moontrace)
#   sudo DURATION=120 bench/soak.sh             (default 600 s, INTERVAL 10 s)
#
# The workload loops until moontrace stops it: fio (io_uring 4k random
# reads of a cached file at RATE IOPS, default 20000, for 10 s: a new ring
# each time), then uring_demo (links, poll, io-workers, a failed request)
# and uring_mix (reads, writes, fsyncs). moontrace starts it with -c, so
# only it is traced, and writes a gzipped trace to OUT_DIR (/var/tmp).
# Needs root, fio, and the workloads of build/tests.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mt=${1:-$here/../build/moontrace}
tests=${TESTS:-$here/../build/tests}
duration=${DURATION:-600}
interval=${INTERVAL:-10}
rate=${RATE:-20000}
out_dir=${OUT_DIR:-/var/tmp}

die() { echo "soak.sh: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root (attaching BPF programs needs it)"
[[ -x $mt ]] || die "no moontrace binary at $mt (build it, or pass its path)"
for w in uring_demo uring_mix; do
  [[ -x $tests/$w ]] || die "no $w in $tests (build the tests, or set TESTS)"
done
command -v fio >/dev/null || die "fio not found (./setup.sh installs it)"
for v in duration interval rate; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "${v^^} must be a positive integer"
done
((duration >= 2 * 60 && interval <= 30)) || die "DURATION must be at least 120 s and INTERVAL at most 30 s"
[[ -d $out_dir ]] || die "OUT_DIR ($out_dir) must exist"

mt=$(realpath "$mt")
tests=$(realpath "$tests")
tmp=$(mktemp -d "$out_dir/moontrace-soak.XXXXXX")
mt_pid=
cleanup() {
  [[ -z $mt_pid ]] || kill "$mt_pid" 2>/dev/null || true
  touch "$tmp/stop"
  rm -rf "$tmp"
}
trap cleanup EXIT
fio_file=$tmp/fio.data
head -c 64M /dev/urandom >"$fio_file"

cat >"$tmp/workload.sh" <<WL
#!/usr/bin/env bash
# Runs until moontrace's --duration ends the trace and this loop with it.
while [ ! -e $tmp/stop ]; do
  fio --name=soak --ioengine=io_uring --rw=randread --bs=4k --iodepth=32 \\
    --filename=$fio_file --size=64m --invalidate=0 --time_based --runtime=10 \\
    --rate_iops=$rate --output=/dev/null
  $tests/uring_demo
  $tests/uring_mix 200 200 200 20
done
WL
chmod +x "$tmp/workload.sh"

source "$here/machine.sh"
start_load=$(cut -d' ' -f1-3 /proc/loadavg)
MOONTRACE_CACHE=$tmp/cache "$mt" --duration "$duration" -o "$tmp/soak.fxt.gz" \
  -c "$tmp/workload.sh" uring 2>"$tmp/stderr" &
mt_pid=$!

# VmRSS every INTERVAL seconds, in MB, while moontrace runs.
rss=()
started=$(date +%s)
while kill -0 "$mt_pid" 2>/dev/null; do
  sleep "$interval"
  kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$mt_pid/status" 2>/dev/null) || break
  [[ -n $kb ]] || break
  rss+=("$kb")
done
status=0
wait "$mt_pid" || status=$?
mt_pid=
touch "$tmp/stop"  # the loop ends with its current fio run
elapsed=$(($(date +%s) - started))
# Ending the trace stops the workload; a status that says so is no failure.
((status == 0)) || echo "soak.sh: moontrace exited with status $status: $(tail -1 "$tmp/stderr")" >&2

per_minute=$((60 / interval))
((${#rss[@]} >= 2 * per_minute)) || { cat "$tmp/stderr" >&2; die "only ${#rss[@]} samples of RSS"; }
report=$(printf '%s\n' "${rss[@]}" | awk -v n="$per_minute" '
  { v[NR] = $1; if ($1 > peak) peak = $1 }
  END {
    for (i = 1; i <= n; i++) first += v[i]
    for (i = NR - n + 1; i <= NR; i++) last += v[i]
    first /= n * 1024; last /= n * 1024
    growth = last - first
    # Flat: no growth over the second half of the run (warm-up, such as
    # buffers and tables filling, happens in the first minutes).
    half = v[NR] / 1024 - v[int(NR / 2)] / 1024
    flat = (half <= 0.02 * last || half <= 1) ? "yes" : "NO"
    printf "| %.1f | %.1f | %+.1f (%+.1f%%) | %+.1f | %.1f | %d | %s |\n",
      first, last, growth, 100 * growth / first, half, peak / 1024, NR, flat
  }')
samples=$(printf '%s\n' "${rss[@]}" | awk '{printf "%s%.1f", (NR > 1 ? ", " : ""), $1 / 1024}')
trace_mb=$(du -m --apparent-size "$tmp/soak.fxt.gz" | cut -f1)
summary=$(grep -E '^moontrace: [0-9]+ events' "$tmp/stderr" | tail -1 | sed 's/^moontrace: //')
requests=$(grep -E '^io_uring: ' "$tmp/stderr" | tail -1 | sed 's/^io_uring: //')

cat <<EOF2
## Soak: \`moontrace uring\` for $((duration / 60)) minutes

$(machine_line "$mt")
fio $(fio --version 2>&1 | head -1); $(date -u +%F); load average before: $start_load, after: $(cut -d' ' -f1-3 /proc/loadavg).
Command: \`moontrace --duration $duration -o soak.fxt.gz -c workload.sh uring\`, the workload looping
fio (io_uring randread 4k, QD 32, $rate IOPS, 10 s), uring_demo and uring_mix; ran ${elapsed} s, exit status $status.

| RSS (MB): first minute | last minute | growth | growth in the second half | peak | samples | flat |
|---:|---:|---:|---:|---:|---:|:---|
$report

Samples every $interval s (MB): $samples.

Trace: $trace_mb MB gzipped; $summary; $requests.
EOF2
