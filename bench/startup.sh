#!/usr/bin/env bash
# Start-up benchmark: exec to all probes attached, for a
# small script, moontrace with a cold and a warm object cache side by side
# with bpftrace on the equivalent one-liner. Prints a markdown report.
#
#   sudo bench/startup.sh [MOONTRACE]      (default: build/moontrace)
#   RUNS=50 sudo bench/startup.sh          (runs per variant, default 20)
#
# Needs root, python3 and Debian's bpftrace; nothing else.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mt=${1:-$here/../build/moontrace}
runs=${RUNS:-20}

die() { echo "startup.sh: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root (attaching BPF programs needs it)"
[[ -x $mt ]] || die "no moontrace binary at $mt (build it, or pass its path)"
command -v bpftrace >/dev/null || die "bpftrace not found (apt-get install bpftrace)"
command -v python3 >/dev/null || die "python3 not found"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer"
tracefs=/sys/kernel/tracing
[[ -d $tracefs/events ]] || tracefs=/sys/kernel/debug/tracing
[[ -d $tracefs/events/io_uring/io_uring_complete ]] ||
  die "tracepoint io_uring:io_uring_complete not found under $tracefs"

mt=$(realpath "$mt")
tmp=$(mktemp -d /tmp/moontrace-startup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

source "$here/machine.sh"
cat <<EOF
## Start-up: exec to all probes attached

$(machine_line "$mt")
$runs runs each, interleaved.

EOF

python3 "$here/startup_bench.py" "$mt" "$here" "$runs" "$tmp"
