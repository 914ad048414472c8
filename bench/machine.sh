# Sourced by the benchmarks: machine_line MOONTRACE prints the machine and
# tool versions a report starts with.
machine_line() {
  local cpu
  cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')
  cat <<EOF2
Machine: $(nproc) CPUs, ${cpu:-unknown CPU}; kernel $(uname -r);
$("$1" --version 2>&1 | head -1) ($1);
$(bpftrace --version 2>&1 | head -1) (Debian's $(dpkg-query -W -f='${Version}' bpftrace 2>/dev/null || echo '?'));
libbpf $(dpkg-query -W -f='${Version}' libbpf1 2>/dev/null || echo '?');
EOF2
}
