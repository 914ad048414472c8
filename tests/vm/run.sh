#!/usr/bin/env bash
# tests/vm/run.sh [--timeout S] [--kernel VER] [--mem MB] [--rw DIR]... [--console] -- COMMAND...
#
# Boots Debian's stock kernel (/boot/vmlinuz-6.1*, package linux-image-amd64)
# under qemu (TCG) with the host's / shared read-only under a tmpfs overlay,
# runs COMMAND there as root in the current directory, prints its stdout and
# stderr, and exits with its exit code. The guest has tracefs, debugfs and
# bpffs mounted, `ulimit -l unlimited`, and a blank 1 GiB disk at /dev/vda.
# Writes go to a tmpfs and are lost, except under each --rw DIR: that host
# folder is shared read-write at the same path (to bring results back).
#
# Exit codes of its own: 124 the command timed out (default 120 s), 125 the
# VM could not be built or booted (the reason and the console are printed).
# --console prints the guest's console (kernel log, boot timings) to stderr.
# Cache: the extracted vmlinux and the initramfs, per kernel version, under
# $MTVM_CACHE (default /var/cache/moontrace-vm); rebuilt when this folder's
# scripts change.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
timeout=120 kver='' mem=2048 console=0
rw=()
die() { echo "vm: $*" >&2; exit 125; }
while (($#)); do
  case $1 in
    --timeout) timeout=$2; shift 2 ;;
    --kernel) kver=$2; shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --rw) rw+=("$(cd "$2" && pwd)") || exit 2; shift 2 ;;
    --console) console=1; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--timeout S] [--kernel VER] [--mem MB] [--rw DIR]... [--console] -- COMMAND..." >&2; exit 2 ;;
  esac
done
(($#)) || { echo "usage: $0 [--timeout S] [--kernel VER] [--mem MB] [--rw DIR]... [--console] -- COMMAND..." >&2; exit 2; }

qemu=$(command -v qemu-system-x86_64) || die "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
if [[ -z $kver ]]; then
  image=$(ls -1 /boot/vmlinuz-6.1.* 2>/dev/null | sort -V | tail -1) ||
    true
  [[ -n $image ]] || die "no /boot/vmlinuz-6.1.* (apt-get install linux-image-amd64)"
  kver=${image#/boot/vmlinuz-}
fi
[[ -e /boot/vmlinuz-$kver ]] || die "no /boot/vmlinuz-$kver"

# The cache, keyed by kernel version and by the builder's own sources.
cache_root=${MTVM_CACHE:-/var/cache/moontrace-vm}
key=$({ cat "$here/build-initramfs.sh" "$here/init" /bin/busybox; stat -c %s.%Y "/boot/vmlinuz-$kver" "/lib/modules/$kver/modules.dep"; } | md5sum | cut -c1-12)
cache=$cache_root/$kver-$key
mkdir -p "$cache_root" || die "cannot create $cache_root"
if [[ ! -e $cache/initramfs ]]; then
  exec 9>"$cache_root/.lock"
  flock 9
  if [[ ! -e $cache/initramfs ]]; then
    t0=$(date +%s.%N)
    rm -rf "$cache_root/$kver"-*  # older builds for this kernel
    mkdir -p "$cache"
    "$here/build-initramfs.sh" "$kver" "$cache" >&2 || { rm -rf "$cache"; die "building the VM for $kver failed"; }
    echo "vm: built $cache in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s" >&2
  fi
  exec 9>&-
fi

# The exchange share: cmd.sh in; stdout, stderr and rc out.
xdir=$(mktemp -d /tmp/mtvm.XXXXXX)
qpid=
cleanup() {
  [[ -n $qpid ]] && kill -KILL "$qpid" 2>/dev/null
  rm -rf "$xdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
{
  echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  echo 'export HOME=/root TERM=dumb'
  printf 'cd %q || exit 125\n' "$PWD"
  printf 'exec'
  printf ' %q' "$@"
  printf '\n'
} >"$xdir/cmd.sh"
truncate -s 1G "$xdir/disk.img"
shares=()
for i in "${!rw[@]}"; do
  echo "rw$i ${rw[$i]}" >>"$xdir/rw"
  shares+=(-virtfs "local,path=${rw[$i]//,/,,},mount_tag=rw$i,security_model=none,multidevs=remap")
done

t0=$(date +%s%N)
"$qemu" -machine q35 -accel tcg,thread=multi -cpu max -smp "$(nproc)" -m "$mem" \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$cache/vmlinux" -initrd "$cache/initramfs" \
  -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=5 mitigations=off tsc=reliable" \
  -serial "file:$xdir/console.log" \
  -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$xdir,mount_tag=mtvm,security_model=none,multidevs=remap" \
  -drive "file=$xdir/disk.img,if=virtio,format=raw,cache=unsafe" \
  ${shares[@]+"${shares[@]}"} \
  </dev/null >"$xdir/qemu.log" 2>&1 &
qpid=$!

now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
deadline=$(($(now_ms) + timeout * 1000))
while kill -0 "$qpid" 2>/dev/null && (($(now_ms) < deadline)); do sleep 0.1; done
timed_out=0
if kill -0 "$qpid" 2>/dev/null; then
  timed_out=1
  kill -KILL "$qpid" 2>/dev/null || true
fi
wait "$qpid" 2>/dev/null || true
qpid=
t1=$(date +%s%N)

cat "$xdir/stdout" 2>/dev/null || true
cat "$xdir/stderr" >&2 2>/dev/null || true
started=$(sed -n 's/^mtvm-init: command starts at \([0-9.]*\) s.*/\1/p' "$xdir/console.log" | tail -1)
if ((console)); then
  echo "---- vm console ----" >&2
  cat "$xdir/console.log" >&2
  echo "---- vm: kernel $kver, guest uptime at command start ${started:-?} s, qemu ran $(((t1 - t0) / 1000000)) ms ----" >&2
fi
if ((timed_out)); then
  echo "vm: timed out after ${timeout} s; console tail:" >&2
  tail -20 "$xdir/console.log" >&2
  exit 124
fi
if [[ ! -s $xdir/rc ]]; then
  echo "vm: the guest ended without an exit code; qemu said:" >&2
  cat "$xdir/qemu.log" >&2
  echo "vm: console tail:" >&2
  tail -30 "$xdir/console.log" >&2
  exit 125
fi
exit "$(cat "$xdir/rc")"
