#!/usr/bin/env bash
# The main job on one machine: the daemon on the synthetic camera (the shelf photos), a few presses,
# a SIGKILL and a restart, more presses; then where every scan went.
# Usage: scripts/demo.sh [path/to/swiftwing]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/debug/swiftwing}
demo=${SWIFTWING_DEMO_DIR:-/tmp/swiftwing-demo}
fixtures=${SWIFTWING_FIXTURES:-$(cd .. && pwd)/shared/fixtures/shelves}
[ -d "$fixtures" ] || fixtures=/work/shared/fixtures/shelves
state="$demo/state"
socket="$demo/control.sock"
log="$demo/daemon.log"
args=(--state-dir "$state" --control-socket "$socket")

rm -rf "$demo"; mkdir -p "$demo"
: > "$demo/swiftwing.toml"
args+=(--config "$demo/swiftwing.toml")

start_daemon() {
  "$bin" run "${args[@]}" --camera "synthetic:$fixtures" --panel "png:$demo/panel.png" >>"$log" 2>&1 &
  daemon=$!
  for _ in $(seq 1 300); do
    # Up, and the camera streaming (the synthetic one decodes its photos first).
    "$bin" status "${args[@]}" 2>/dev/null | grep -q '^camera: .*streaming' && return 0
    kill -0 "$daemon" 2>/dev/null || { echo "daemon exited; log:"; cat "$log"; exit 1; }
    sleep 0.1
  done
  echo "daemon did not come up; log:"; cat "$log"; exit 1
}

press() {
  local id
  if id=$("$bin" shutter "${args[@]}" 2>&1); then echo "  press -> scan $id"; else echo "  ${id#Error: }"; fi
}

echo "== SwiftWing demo: state in $state, photos from $fixtures"
start_daemon
echo "== daemon running (pid $daemon); pressing the shutter 4 times"
for _ in 1 2 3 4; do press; done
echo "== power cut: kill -9 the daemon, then start it again"
kill -9 "$daemon"; wait "$daemon" 2>/dev/null || true
start_daemon
echo "== daemon back (pid $daemon); 3 more presses"
for _ in 1 2 3; do press; done
echo
"$bin" status "${args[@]}"
echo
echo "== the queue (every scan durable, one row each)"
"$bin" queue "${args[@]}"
echo
echo "== the JPEGs in the spool"
for f in "$state"/spool/*.jpg; do
  case "$f" in *.thumb.jpg) continue ;; esac
  printf '  %s  %s\n' "$(basename "$f")" "$(file -b "$f" | grep -o '[0-9]*x[0-9]*' | tail -1) $(stat -c %s "$f") bytes"
done
kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true
echo
echo "== daemon stopped with SIGTERM; its log is $log"
