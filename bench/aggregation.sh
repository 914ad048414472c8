#!/usr/bin/env bash
# In-kernel aggregation benchmark: how many events per
# second a count and a log2 histogram absorb in the kernel with no loss, and
# their cost per hit against an empty BPF program on the same tracepoint,
# side by side with bpftrace. Prints a markdown report.
#
#   sudo bench/aggregation.sh [MOONTRACE]   (default: build/moontrace)
#   sudo ROUNDS=9 N=10000000 BATCH=32 bench/aggregation.sh   (defaults 5, 5000000, 32)
#
# The workload is build/tests/nop_storm N BATCH: N io_uring NOPs, user_data
# 1..N, one io_uring_complete hit each. Only the workload is timed: it is
# forked first and held on a pipe, the tracer starts with its pid as the
# target and says it is attached, the workload is released and timed until
# it is reaped; then the tracer gets SIGINT and prints its aggregation, which
# must count exactly N. The workload is pinned, in turn, to CPU 0 and to the
# last CPU: bpftrace's programs return 1, so on CPU 0, where the tracepoint's
# perf event is opened, the kernel also records a perf sample for every hit.
# Needs root, python3 and Debian's bpftrace.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mt=${1:-$here/../build/moontrace}
storm=${STORM:-$here/../build/tests/nop_storm}
rounds=${ROUNDS:-5}
n=${N:-5000000}
batch=${BATCH:-32}

die() { echo "aggregation.sh: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root (attaching BPF programs needs it)"
[[ -x $mt ]] || die "no moontrace binary at $mt (build it, or pass its path)"
[[ -x $storm ]] || die "no nop_storm at $storm (build the tests, or set STORM)"
command -v bpftrace >/dev/null || die "bpftrace not found (apt-get install bpftrace)"
command -v python3 >/dev/null || die "python3 not found"
for v in rounds n batch; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "${v^^} must be a positive integer"
done

mt=$(realpath "$mt")
storm=$(realpath "$storm")
tmp=$(mktemp -d /tmp/moontrace-aggregation.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

source "$here/machine.sh"
cat <<EOF
## In-kernel aggregations: events per second and cost per hit

$(machine_line "$mt")
nop_storm $n $batch, $rounds rounds of every variant on CPU 0 and on the last CPU, interleaved;
load average before: $(cut -d' ' -f1-3 /proc/loadavg).

EOF

MOONTRACE_CACHE=$tmp/cache python3 "$here/aggregation_bench.py" "$mt" "$storm" "$here" "$rounds" "$n" "$batch"

cat <<EOF

Load average after: $(cut -d' ' -f1-3 /proc/loadavg).
Method: the workload is forked and held on a pipe; the tracer starts with its
pid as the target (moontrace \`-p PID\`, the same in-kernel filter as \`-c\`;
bpftrace \`/pid == PID/\`) and is waited for until attached (moontrace's
\`moontrace: attached\` line, bpftrace's BEGIN printf); the workload is then
released and timed until reaped (python3 perf_counter), so tracer start-up
and teardown are not in the figures. After it, the tracer gets SIGINT and
prints its aggregation; the kernel-side count (for histograms the sum of the
buckets) must equal N, with no lost or dropped updates. The workload is
pinned to one CPU per run (CPU 0 and the last CPU in turn); figures are
medians of $rounds runs per CPU; ns/hit = (median - median of the reference
on the same CPU) / N. "Its floor" is the
same tool's empty program with the target filter. The two unfiltered empty
programs are the bare cost of running any BPF program on the tracepoint.
- moontrace: bench/aggregation_probe.lua --kind empty|count|count_comm|hist
- bpftrace: \`tracepoint:io_uring:io_uring_complete /pid == PID/ { BODY } BEGIN { printf("ready\\n"); }\`
EOF
