#!/usr/bin/env bash
# Peak resident memory (VmHWM) of the daemon with N scans queued (default 1000): the daemon on the
# synthetic camera at 1920x1080, N presses through `swiftwing shutter`, then a restart that
# reconciles the N-scan queue. Prints a Markdown table. Usage: scripts/bench-memory.sh [N] [binary]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
bin=${2:-.build/release/swiftwing}
work=$(mktemp -d /tmp/swiftwing-membench.XXXXXX)
trap 'kill -9 ${daemon:-0} 2>/dev/null || true; rm -rf "$work"' EXIT
: > "$work/swiftwing.toml"
args=(--config "$work/swiftwing.toml" --state-dir "$work/state" --control-socket "$work/control.sock")

start() {
  SWIFTWING_CAMERA_WIDTH=1920 SWIFTWING_CAMERA_HEIGHT=1080 "$bin" run "${args[@]}" --camera synthetic >>"$work/log" 2>&1 &
  daemon=$!
  until "$bin" status "${args[@]}" 2>/dev/null | grep -q '^camera: .*streaming'; do sleep 0.1; done
}
hwm() { awk '/VmHWM/ {print $2}' "/proc/$daemon/status"; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$daemon/status"; }

start
idle_hwm=$(hwm)
began=$(date +%s.%N)
for _ in $(seq 1 "$count"); do "$bin" shutter "${args[@]}" >/dev/null; done
ended=$(date +%s.%N)
press_hwm=$(hwm); press_rss=$(rss)
kill -TERM "$daemon"; wait "$daemon" || true
start
sleep 1
restart_hwm=$(hwm)
kill -TERM "$daemon"; wait "$daemon" || true
queued=$("$bin" queue --json "${args[@]}" | grep -c '"state" : "queued"')
echo "| measure | value |"
echo "|---|---|"
echo "| scans queued | $queued |"
echo "| peak RSS after start, idle (KiB) | $idle_hwm |"
echo "| peak RSS over $count presses (KiB) | $press_hwm (RSS at end $press_rss) |"
echo "| peak RSS after restart with $queued queued (KiB) | $restart_hwm |"
rate=$(awk -v n="$count" -v a="$began" -v b="$ended" 'BEGIN {printf "%.1f", n / (b - a)}')
echo "| presses per second, one at a time through the CLI | $rate |"
