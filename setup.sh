#!/usr/bin/env bash
# moontrace set-up on Debian 12, as root:
#   ./setup.sh        install what is missing, build, trace the demo workload
#   ./setup.sh test   install what is missing, build, run every test
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  build-essential cmake pkg-config
  llvm-19-dev libclang-cpp19-dev libclang-19-dev   # in-process Clang, BPF backend
  libbpf-dev libelf-dev zlib1g-dev                 # loading and attaching; zlib also gzips traces
  liblua5.4-dev                                    # scripts
  nettle-dev openssh-client                        # packages: sha256, signatures (ssh-keygen)
  liburing-dev libgtest-dev fio                    # workloads and tests
  plocate qemu-utils                               # tests: real programs that use io_uring (plocate, qemu-img)
  systemtap-sdt-dev                                # tests: a workload with USDT probes (sys/sdt.h)
  libc6-dbg                                        # tests: user stacks name libc's own functions from its debug file
  nlohmann-json3-dev                               # tests parse -f json output
  bpftrace linux-perf                              # benchmarks compare against them
  qemu-system-x86 linux-image-amd64 busybox-static # tests/vm: Debian's 6.1 kernel in qemu
  xz-utils cpio                                    # tests/vm: unpack the kernel, pack the initramfs
  e2fsprogs                                        # tests: mkfs.ext4 for a private ext4, here and in the VM
  strace                                           # tests: a warm start opens no kernel BTF
  clang-19 libclang-rt-19-dev                      # tests: the ASan+UBSan build and the libFuzzer targets
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# BPF programs on tracepoints need tracefs; some machines boot without it.
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" = 0 ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

case "${1:-run}" in
  run)
    build/moontrace -c build/tests/uring_demo uring
    echo "setup: open uring.fxt in https://ui.perfetto.dev (or: build/moontrace dump uring.fxt)"
    ;;
  test)
    (cd build && ctest --output-on-failure -j1)
    # Then the same tests built with ASan+UBSan (the e2e tests run the
    # sanitized moontrace), and each fuzz target for a bounded time; any
    # sanitizer report fails them.
    cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DMT_SANITIZE=ON -DMT_FUZZ=ON >/dev/null
    cmake --build build-sanitize -j"$(nproc)" --target moontrace unit_tests e2e_tests fuzzers
    (cd build-sanitize && ctest --output-on-failure -j1 -R '^(unit|e2e)\.' -E '\.E2eVm\.')
    tests/fuzz/run.sh build-sanitize "${MT_FUZZ_SECONDS:-60}"
    ;;
  *)
    echo "usage: $0 [run|test]" >&2
    exit 2
    ;;
esac
