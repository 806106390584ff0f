#!/usr/bin/env bash
# Peak resident memory (VmHWM) of the daemon with N scans queued (default 1000) and 3 progress
# streams open: the reference backend in a slow mode (recognition takes an hour, a ping every 2 s)
# keeps the first 3 uploaded jobs streaming while the rest wait in the queue; the daemon runs on the
# synthetic camera (or CAMERA, e.g. vivid's /dev/video0 in the VM rig) at 1920x1080. N presses go
# through `swiftwing shutter`, then a restart reconciles the queue and resumes the 3 streams.
# Prints a Markdown table (RSS split into anonymous memory and mapped files, from /proc/PID/status).
# Two peaks are read: over the process's whole life (start-up included: the synthetic camera decodes its
# source photos then), and in the measured state only (VmHWM reset through /proc/PID/clear_refs once the
# daemon is up, so the peak is that of the presses, uploads and streams).
# SWIFTWING_BENCH_WEB=BINARY turns [web] on and runs that swiftwing-web beside the daemon on the same state
# (loopback, any free port): the daemon's own figures with the library in a browser, and the web process's RSS.
# Usage: [SWIFTWING_BENCH_PRESS_PAUSE=S] [SWIFTWING_BENCH_WEB=BINARY] scripts/bench-memory.sh [N] [swiftwing binary] [talaria-reference binary] [CAMERA]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
bin=${2:-.build/release/swiftwing}
backend_bin=${3:-$(dirname "$bin")/talaria-reference}
camera=${4:-synthetic}
# Seconds between presses (default 0: as fast as the CLI goes, so frames can queue up behind a slow
# worker, as under the VM rig's emulation); 1 is about a person's pace.
pause=${SWIFTWING_BENCH_PRESS_PAUSE:-0}
work=$(mktemp -d /tmp/swiftwing-membench.XXXXXX)
web_bin=${SWIFTWING_BENCH_WEB:-}
daemon=""; backend=""; web=""
stop_all() {
  for pid in $daemon $backend $web; do { kill -9 "$pid" && wait "$pid"; } 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop_all EXIT

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/api-key"; chmod 600 "$work/api-key"
"$backend_bin" --port 0 --port-file "$work/port" --api-key-file "$work/api-key" \
  --recognition-delay-ms 3600000 --ping-interval-ms 2000 --log-level warning >"$work/backend.log" 2>&1 &
backend=$!
until [ -s "$work/port" ]; do kill -0 "$backend" || { cat "$work/backend.log"; exit 1; }; sleep 0.1; done
port=$(cat "$work/port")
url="http://127.0.0.1:$port/"
cat > "$work/swiftwing.toml" <<EOF
[backend]
url = "$url"
api_key_file = "$work/api-key"
[enrichment]
enabled = false
EOF
args=(--config "$work/swiftwing.toml" --state-dir "$work/state" --control-socket "$work/control.sock")
[ -z "$web_bin" ] || printf '[web]\nenabled = true\naddress = "127.0.0.1"\n' >> "$work/swiftwing.toml"

start() {
  SWIFTWING_CAMERA_WIDTH=1920 SWIFTWING_CAMERA_HEIGHT=1080 \
    "$bin" run "${args[@]}" --camera "$camera" >>"$work/log" 2>&1 &
  daemon=$!
  until "$bin" status "${args[@]}" 2>/dev/null | grep -q '^camera: .*streaming'; do sleep 0.1; done
}
field() { awk -v key="$1:" '$1 == key {print $2}' "/proc/$daemon/status"; }
# Established connections from the daemon to the backend: the open progress streams (and any upload).
connections() { ss -Htn state established "( dport = :$port )" | wc -l; }
streams_opened() { curl -fsS "$url"_stats 2>/dev/null | grep -o '"streamsOpened" *: *[0-9]*' | grep -o '[0-9]*$'; }
# Waits up to 20 s for the backend to have seen `want` streams in all.
wait_streams() {
  for _ in $(seq 1 200); do [ "$(streams_opened || echo 0)" -ge "$1" ] && return 0; sleep 0.1; done
  kill -0 "$backend" 2>/dev/null || echo "the backend exited" >&2
  echo "backend log:" >&2; tail -20 "$work/backend.log" >&2
  echo "the backend saw $(streams_opened || echo no) of $1 streams; daemon log:" >&2; tail -20 "$work/log" >&2
  exit 1
}

start
if [ -n "$web_bin" ]; then
  "$web_bin" "${args[@]}" --port 0 >"$work/web.log" 2>&1 &
  web=$!
  until grep -q "listening on" "$work/web.log"; do kill -0 "$web" || { cat "$work/web.log"; exit 1; }; sleep 0.1; done
fi
idle_hwm=$(field VmHWM); idle_rss=$(field VmRSS)
echo 5 > "/proc/$daemon/clear_refs"  # resets VmHWM to the current RSS
began=$(date +%s.%N)
for _ in $(seq 1 "$count"); do "$bin" shutter "${args[@]}" >/dev/null; sleep "$pause"; done
ended=$(date +%s.%N)
wait_streams 3
sleep 3
press_hwm=$(field VmHWM); press_rss=$(field VmRSS); press_anon=$(field RssAnon); press_file=$(field RssFile)
press_threads=$(field Threads); press_connections=$(connections)
# The camera driver's buffers the daemon has read (a V4L2 camera's mmap'd /dev/video* pages count as
# files in RSS with vb2-vmalloc drivers such as vivid; a Pi's CSI camera maps them uncounted).
press_driver=$(awk '/^[0-9a-f]+-[0-9a-f]+ / {video = ($6 ~ /^\/dev\/video/)} video && $1 == "Rss:" {kib += $2}
  END {print kib + 0}' "/proc/$daemon/smaps")
kill -TERM "$daemon"; wait "$daemon" || true
start
restart_start_hwm=$(field VmHWM)
echo 5 > "/proc/$daemon/clear_refs"
wait_streams 6
sleep 3
restart_hwm=$(field VmHWM); restart_anon=$(field RssAnon); restart_file=$(field RssFile)
restart_connections=$(connections)
kill -TERM "$daemon"; wait "$daemon" || true
queued=$("$bin" queue --json "${args[@]}" | grep -c '"state" : "queued"')
analyzing=$("$bin" queue --json "${args[@]}" | grep -c '"state" : "analyzing"')
echo "| measure | value |"
echo "|---|---|"
echo "| camera | $camera |"
echo "| pause between presses (s) | $pause |"
echo "| scans queued / analyzing (streams) at the end | $queued / $analyzing |"
echo "| peak RSS of start-up (KiB) | $idle_hwm |"
echo "| RSS once up, idle (KiB) | $idle_rss |"
echo "| **peak RSS over $count presses with the streams open** (KiB; start-up excluded) | $press_hwm |"
echo "| then: RSS, of it anonymous + files (KiB) | $press_rss = $press_anon + $press_file |"
echo "| then: of the files, the camera driver's buffers (KiB) | $press_driver |"
echo "| then: threads, connections to the backend | $press_threads, $press_connections |"
echo "| peak RSS of the restart's start-up, $count scans queued (KiB) | $restart_start_hwm |"
echo "| peak RSS after restart, streams resumed (KiB; start-up excluded) | $restart_hwm (anonymous $restart_anon, files $restart_file) |"
echo "| then: connections to the backend | $restart_connections |"
rate=$(awk -v n="$count" -v a="$began" -v b="$ended" 'BEGIN {printf "%.1f", n / (b - a)}')
echo "| presses per second, one at a time through the CLI | $rate |"
if [ -n "$web" ]; then
  echo "| swiftwing-web beside it at the end: VmRSS, VmHWM (KiB) | $(awk '$1 == "VmRSS:" {print $2}' "/proc/$web/status"), $(awk '$1 == "VmHWM:" {print $2}' "/proc/$web/status") |"
fi
