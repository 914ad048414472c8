#!/usr/bin/env bash
# Tracing io_uring: what `moontrace uring` costs a
# workload, against empty BPF programs on the same tracepoints (the floors:
# classic tracepoints, and tp_btf on the io_uring ones), perf record and
# bpftrace, on three workloads:
#   fio: io_uring 4k random reads of a file in the page cache, QD 32;
#   nop: build/tests/nop_storm N BATCH (io_uring NOPs, user_data 1..N);
#   storm30: nop_storm at full speed for LONG_SECS (30) seconds, traced by
#     `moontrace uring` only (trace to /dev/null: at full speed it is
#     gigabytes), for its loss and its tracer's peak memory.
# moontrace also writes its trace gzipped (-o FILE.gz), as a variant of its
# own. For each tracer: throughput, ns added per request, lost events, output
# size and bytes per event, peak RSS and CPU of the tracer; then the
# highest rate moontrace writes with zero loss, and build/bench/fxt_sink_bench.
# Prints a markdown report that ends with one table: each tracing target
# against the median and the worst run, met or missed.
#
#   sudo bench/uring.sh [MOONTRACE]        (default: build/moontrace)
#   sudo RUNS=5 N=4000000 FIO_SECS=3 bench/uring.sh
#   sudo RUNS=1 SWEEP=0 WORKLOADS=nop VARIANTS=untraced,mt_floor,mt bench/uring.sh
#
# RUNS (3) runs of each variant, interleaved; N (2000000) NOPs in batches of
# BATCH (32); FIO_SECS (2) seconds of fio on a FIO_SIZE (256m) file in
# FIO_DIR (/var/tmp: a disk file system); traces go to OUT_DIR (/dev/shm, a
# tmpfs). LONG_RUNS (1) runs of LONG_SECS (30) seconds for storm30.
# WORKLOADS (fio,nop,storm30) and VARIANTS (untraced,mt_floor,mt_floor_btf,
# bt_floor,mt,mt_gz,perf,bt) run only those (comma-separated); what a target
# needs and was left out is "not measured" in the final table. SWEEP=0 skips
# the zero-loss search, STATS=0 the runs with the kernel's BPF accounting,
# SINK_BENCH=none fxt_sink_bench (default: bench/fxt_sink_bench next to
# MOONTRACE). MOONTRACE_BUFFER_KB is passed on to moontrace. The workload
# runs on the last CPU, tracers on CPU 0. The default run takes about 9
# minutes. Needs root, python3, fio, perf (linux-perf) and Debian's bpftrace.
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
stats=${STATS:-1}
long_runs=${LONG_RUNS:-1}
long_secs=${LONG_SECS:-30}
workloads=${WORKLOADS:-fio,nop,storm30}
variants=${VARIANTS:-untraced,mt_floor,mt_floor_btf,bt_floor,mt,mt_gz,perf,bt}
sink_bench=${SINK_BENCH:-$(dirname "$mt")/bench/fxt_sink_bench}

die() { echo "uring.sh: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root (attaching BPF programs needs it)"
[[ -x $mt ]] || die "no moontrace binary at $mt (build it, or pass its path)"
[[ -x $storm ]] || die "no nop_storm at $storm (build the tests, or set STORM)"
for tool in bpftrace perf fio python3; do
  command -v $tool >/dev/null || die "$tool not found (./setup.sh installs it)"
done
for v in runs n batch fio_secs long_runs long_secs; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "${v^^} must be a positive integer"
done
[[ -d $fio_dir && -d $out_dir ]] || die "FIO_DIR ($fio_dir) and OUT_DIR ($out_dir) must exist"
for w in ${workloads//,/ }; do
  [[ $w =~ ^(fio|nop|storm30)$ ]] || die "WORKLOADS: unknown '$w' (fio, nop, storm30)"
done
for v in ${variants//,/ }; do
  [[ $v =~ ^(untraced|mt_floor|mt_floor_btf|bt_floor|mt|mt_gz|perf|bt)$ ]] ||
    die "VARIANTS: unknown '$v' (untraced, mt_floor, mt_floor_btf, bt_floor, mt, mt_gz, perf, bt)"
done
if [[ ,$workloads, == *,storm30,* ]]; then
  "$storm" 1s "$batch" 2>&1 | grep -q 'NOPs in' ||
    die "$storm does not take SECONDSs (rebuild it: cmake --build build --target nop_storm)"
fi
[[ $sink_bench == none || -x $sink_bench ]] ||
  die "no fxt_sink_bench at $sink_bench (build it: cmake --build build --target fxt_sink_bench; or SINK_BENCH=none)"

mt=$(realpath "$mt")
storm=$(realpath "$storm")
tmp=$(mktemp -d "$out_dir/moontrace-uring.XXXXXX")
fio_file=$(mktemp "$fio_dir/moontrace-uring-fio.XXXXXX")
trap 'rm -rf "$tmp" "$fio_file"' EXIT

source "$here/machine.sh"
cat <<EOF
## Tracing io_uring

$(machine_line "$mt")
$(perf --version 2>&1 | head -1); $(fio --version 2>&1 | head -1);
$runs runs of every variant, interleaved (workloads $workloads; variants $variants); workload on CPU $(($(nproc) - 1)), tracers on CPU 0;
traces in $(df --output=fstype "$out_dir" | tail -1) ($out_dir), fio's file on $(df --output=fstype "$fio_dir" | tail -1) ($fio_dir);
MOONTRACE_BUFFER_KB=${MOONTRACE_BUFFER_KB:-default (64 MiB shared by the CPUs, 1 to 8 MiB each)}; $(date +%F);
load average before: $(cut -d' ' -f1-3 /proc/loadavg).

EOF

MOONTRACE_CACHE=$tmp/cache python3 "$here/uring_bench.py" "$mt" "$storm" "$here" "$tmp" "$fio_file" "$runs" "$n" \
  "$batch" "$fio_secs" "$fio_size" "$sweep" "$stats" "$long_runs" "$long_secs" "$workloads" \
  "$variants" "$sink_bench"
