#!/usr/bin/env bash
# Runs each fuzz target for a bounded time from its seeds and fails on the
# first crash, sanitizer report, timeout or out-of-memory:
#   tests/fuzz/run.sh BUILD_DIR [SECONDS_EACH] [TARGET...]
# BUILD_DIR is a build configured with -DMT_FUZZ=ON (setup.sh test uses
# build-sanitize). What a target finds is kept in BUILD_DIR/fuzz/artifacts;
# reproduce it with BUILD_DIR/fuzz/TARGET_fuzzer FILE.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:?usage: $0 BUILD_DIR [SECONDS_EACH] [TARGET...]}" && pwd)"
seconds="${2:-60}"
shift $(($# < 2 ? $# : 2))
targets=("$@")
((${#targets[@]})) || targets=(script_front_end fxt_reader record_decoder)

# Seeds of each target, read only: the shipped scripts, the tests' scripts
# and the stdlib are seeds of the script front end.
seeds() {
  case "$1" in
    script_front_end)
      echo "$src/tests/fuzz/corpus/script_front_end $src/scripts $src/tests/e2e/scripts $src/stdlib"
      ;;
    *) [ -d "$src/tests/fuzz/corpus/$1" ] && echo "$src/tests/fuzz/corpus/$1" || true ;;
  esac
}

work="$(mktemp -d /tmp/moontrace-fuzz.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/fuzz/artifacts"
failed=0
for t in "${targets[@]}"; do
  bin="$build/fuzz/${t}_fuzzer"
  [ -x "$bin" ] || { echo "fuzz: $bin is not built (cmake --build $build --target fuzzers)" >&2; exit 2; }
  dict=()
  [ -f "$src/tests/fuzz/$t.dict" ] && dict=("-dict=$src/tests/fuzz/$t.dict")
  mkdir -p "$work/$t"
  # New inputs go to the first corpus directory, a scratch one.
  # shellcheck disable=SC2046
  if (cd "$work" && "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "${dict[@]}" -artifact_prefix="$build/fuzz/artifacts/${t}-" \
        "$work/$t" $(seeds "$t")) >"$work/$t.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
    echo "fuzz: $t: ${runs:-?} inputs in ${seconds} s, no crash"
  else
    failed=1
    echo "fuzz: $t FAILED; the end of its log:" >&2
    tail -n 60 "$work/$t.log" >&2
    echo "fuzz: $t: the input is in $build/fuzz/artifacts/ (reproduce: $bin FILE)" >&2
  fi
done
exit "$failed"
