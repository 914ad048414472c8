#!/usr/bin/env bash
# build-initramfs.sh KVER OUTDIR: writes OUTDIR/vmlinux (the uncompressed
# kernel of /boot/vmlinuz-KVER, for qemu's PVH entry) and OUTDIR/initramfs
# (busybox-static, the virtio/9p/overlay modules of KVER, tests/vm/init).
set -euo pipefail
kver=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
image=/boot/vmlinuz-$kver
moddir=/lib/modules/$kver
busybox=/bin/busybox
for f in "$image" "$moddir/modules.dep" "$busybox"; do
  [[ -e $f ]] || { echo "build-initramfs: $f is missing (install linux-image-amd64, busybox-static)" >&2; exit 1; }
done
! LC_ALL=C grep -q '/lib64/ld-linux' "$busybox" ||
  { echo "build-initramfs: $busybox is not static (install busybox-static)" >&2; exit 1; }

work=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The kernel: like the kernel's scripts/extract-vmlinux, try each offset
# where a compressed stream's magic appears until one decompresses to ELF.
is_elf() { [[ $(head -c4 "$1" | od -An -c | tr -d ' ') == '177ELF' ]]; }
try() {  # try MAGIC_REGEX DECOMPRESSOR...
  local magic=$1; shift
  local off
  for off in $(LC_ALL=C grep -obUaP "$magic" "$image" | cut -d: -f1); do
    tail -c +$((off + 1)) "$image" | "$@" >"$work/vmlinux" 2>/dev/null || true
    if [[ -s $work/vmlinux ]] && is_elf "$work/vmlinux"; then return 0; fi
  done
  return 1
}
try '\xfd7zXZ\x00' xz -dc ||
  try '\x1f\x8b\x08' gzip -dc ||
  try '\x28\xb5\x2f\xfd' zstd -dc ||
  try 'BZh' bzip2 -dc ||
  try '\x5d\x00\x00\x00' xz -F lzma -dc ||
  { echo "build-initramfs: cannot extract an ELF kernel from $image" >&2; exit 1; }

# The initramfs: modules in dependency order, from modules.dep.
mods=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
  9pnet 9pnet_virtio netfs fscache 9p overlay virtio_blk)
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,modules}
cp "$busybox" "$root/bin/busybox"
cp "$here/init" "$root/init"
chmod 755 "$root/init"
: >"$root/modules.order"
declare -A seen=()
add_module() {  # add_module PATH-RELATIVE-TO-MODDIR, after its dependencies
  local rel=$1 dep name
  [[ -n ${seen[$rel]:-} ]] && return 0
  seen[$rel]=1
  for dep in $(grep "^$rel:" "$moddir/modules.dep" | cut -d: -f2); do add_module "$dep"; done
  name=$(basename "$rel"); name=${name%%.ko*}
  case $rel in
    *.ko) cp "$moddir/$rel" "$root/modules/$name.ko" ;;
    *.ko.xz) xz -dc "$moddir/$rel" >"$root/modules/$name.ko" ;;
    *.ko.zst) zstd -qdc "$moddir/$rel" >"$root/modules/$name.ko" ;;
    *.ko.gz) gzip -dc "$moddir/$rel" >"$root/modules/$name.ko" ;;
  esac
  echo "$name" >>"$root/modules.order"
}
for m in "${mods[@]}"; do
  rel=$(grep -oE "^[^:]*/$m\.ko(\.[a-z]+)?:" "$moddir/modules.dep" | head -1 | tr -d :)
  [[ -n $rel ]] || { echo "build-initramfs: module $m not found in $moddir" >&2; exit 1; }
  add_module "$rel"
done
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$work/initramfs"

mv "$work/vmlinux" "$out/vmlinux"
mv "$work/initramfs" "$out/initramfs"
