#!/usr/bin/env bash
# Fails when the daemon runs any ICU function during scripts/bench-memory.sh (start-up, N presses,
# uploads, 3 progress streams, a restart). ICU is linked into the static binary with Foundation; each
# page of its code and of its 30 MB data table that the daemon touches counts in its resident set.
# Runs `swiftwing run` under gdb with a breakpoint on every ICU C entry point (`swift_u…_…`, as the
# toolchain renames them) and prints the first call's backtrace. Needs gdb.
# Usage: scripts/check-no-icu.sh [N presses, default 20] [swiftwing binary] [talaria-reference binary]
set -euo pipefail
if [ -n "${CHECK_NO_ICU_BINARY:-}" ]; then
  # Called by bench-memory.sh in place of the swiftwing binary: only the daemon runs under gdb.
  if [ "$1" = run ]; then
    # Each hit prints its backtrace and the daemon carries on, so the scenario still completes.
    exec gdb -batch -nx -ex "set pagination off" -ex "handle all nostop noprint pass" \
      -ex "rbreak ^swift_u[a-z0-9]*_" \
      -ex "python [setattr(b, 'commands', 'bt 30\ncontinue') for b in gdb.breakpoints()]" \
      -ex run --args "$CHECK_NO_ICU_BINARY" "$@" >"$CHECK_NO_ICU_LOG.$$" 2>&1
  fi
  exec "$CHECK_NO_ICU_BINARY" "$@"
fi
cd "$(dirname "$0")/.."
count=${1:-20}
bin=$(realpath "${2:-.build/release/swiftwing}")
backend_bin=$(realpath "${3:-$(dirname "$bin")/talaria-reference}")
command -v gdb >/dev/null || { echo "gdb is missing: sudo apt-get install gdb" >&2; exit 2; }
logs=$(mktemp -d /tmp/swiftwing-icu-check.XXXXXX)
trap 'rm -rf "$logs"' EXIT
CHECK_NO_ICU_BINARY=$bin CHECK_NO_ICU_LOG=$logs/gdb timeout 1200 \
  scripts/bench-memory.sh "$count" "$(realpath "$0")" "$backend_bin" >"$logs/bench" 2>&1 || {
  echo "the scenario failed under gdb; its last lines:" >&2
  tail -5 "$logs/bench" >&2
}
breakpoints=$(grep -ch '^Breakpoint [0-9]* at ' "$logs"/gdb.* | head -1)
[ "${breakpoints:-0}" -gt 100 ] || { echo "gdb set ${breakpoints:-no} breakpoints: is $bin stripped?" >&2; exit 2; }
if grep -q 'hit Breakpoint' "$logs"/gdb.*; then
  echo "the daemon ran ICU; the first call:" >&2
  grep -h -A30 'hit Breakpoint' "$logs"/gdb.* | grep -E 'hit Breakpoint|^#' | head -31 >&2
  exit 1
fi
echo "no ICU function ran in $(find "$logs" -maxdepth 1 -name "gdb.*" | wc -l) daemon runs ($count presses, $breakpoints breakpoints)"
