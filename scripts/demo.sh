#!/usr/bin/env bash
# The main job on one machine: the reference backend and the daemon on the synthetic camera (the
# shelf photos). The reference backend's hash "recognizer" reads nothing on the photos: it is here for
# its fault injection (the outage, the rate limit, the refused key). Presses online, a power cut (kill -9) and restart, a spell offline (backend
# stopped) while pressing continues, reconnection and drain, a rate limit; then the library.
# Then, with a library of its own, what the device identifies by itself: a book's barcode read with
# the network down, its title filled in when the catalogue answers, and a blurred frame refused.
# The status panel is drawn into $demo/panel.png, and copied at each stage (panel-*.png).
# Last, the recognizer (swiftwing-recognizer serve) reads the two shelf photos offline and the titles
# it found are printed beside the dataset's annotations of the same photos.
# Usage: scripts/demo.sh [path/to/swiftwing] [path/to/talaria-reference]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/debug/swiftwing}
backend_bin=${2:-$(dirname "$bin")/talaria-reference}
scenes_bin=$(dirname "$bin")/DemoScenes
demo=${SWIFTWING_DEMO_DIR:-/tmp/swiftwing-demo}
state="$demo/state"
socket="$demo/control.sock"
log="$demo/daemon.log"
backend_log="$demo/backend.log"
args=(--state-dir "$state" --control-socket "$socket")

rm -rf "$demo"; mkdir -p "$demo"
# A throwaway key for this run: the backend demands it, the daemon reads it from a credential file.
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$demo/api-key"; chmod 600 "$demo/api-key"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 18787)
url="http://127.0.0.1:$port/"
cat > "$demo/swiftwing.toml" <<EOF
[backend]
url = "$url"
api_key_file = "$demo/api-key"
probe_interval_seconds = 1.0
round_interval_seconds = 5.0
[enrichment]
base_url = "$url"
EOF
args+=(--config "$demo/swiftwing.toml")

daemon=""; backend=""
cleanup() {
  [ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  [ -n "$backend" ] && kill -TERM "$backend" 2>/dev/null && wait "$backend" 2>/dev/null
  [ -n "${recognizer:-}" ] && kill -TERM "$recognizer" 2>/dev/null && wait "$recognizer" 2>/dev/null
  true
}
trap cleanup EXIT

start_backend() {
  "$backend_bin" --port "$port" --api-key-file "$demo/api-key" --recognition-delay-ms 1500 --retry-ms 1000 \
    >>"$backend_log" 2>&1 &
  backend=$!
  for _ in $(seq 1 300); do
    grep -q "listening on" "$backend_log" 2>/dev/null && curl -fsS "$url"_stats >/dev/null 2>&1 && return 0
    kill -0 "$backend" 2>/dev/null || { echo "backend exited; log:"; cat "$backend_log"; exit 1; }
    sleep 0.1
  done
  echo "backend did not come up; log:"; cat "$backend_log"; exit 1
}

stop_backend() { kill -TERM "$backend"; wait "$backend" 2>/dev/null || true; backend=""; : > "$backend_log"; }

start_daemon() {
  "$bin" run "${args[@]}" --camera "${1:-synthetic}" --panel "png:$demo/panel.png" >>"$log" 2>&1 &
  daemon=$!
  for _ in $(seq 1 300); do
    # Up, and the camera streaming (the synthetic one decodes its photos first).
    "$bin" status "${args[@]}" 2>/dev/null | grep -q '^camera: .*streaming' && return 0
    kill -0 "$daemon" 2>/dev/null || { echo "daemon exited; log:"; cat "$log"; exit 1; }
    sleep 0.1
  done
  echo "daemon did not come up; log:"; cat "$log"; exit 1
}

stop_daemon() { kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=""; }

press() {
  local id
  if id=$("$bin" shutter "${args[@]}" 2>&1); then echo "  press -> scan $id"; else echo "  ${id#Error: }"; fi
}

# Scans still on their way (queued, uploading or analyzing).
in_flight() { "$bin" queue "${args[@]}" | grep -cE ' (queued|uploading|analyzing) ' || true; }

wait_drained() {
  for _ in $(seq 1 600); do
    [ "$(in_flight)" = 0 ] && return 0
    sleep 0.2
  done
  echo "  (still in flight after the wait:)"; "$bin" queue "${args[@]}"
}

uplink_line() { "$bin" status "${args[@]}" | grep -E '^backend:' || true; }
snapshot() { sleep 0.6; [ -f "$demo/panel.png" ] && cp "$demo/panel.png" "$demo/panel-$1.png" && echo "  panel: $demo/panel-$1.png"; }

echo "== SwiftWing demo: state in $state, the shipped shelf photos, backend $url"
start_backend
start_daemon
echo "== online: pressing the shutter 3 times"
for _ in 1 2 3; do press; done
snapshot analyzing
wait_drained
uplink_line
snapshot online
echo "== power cut: 2 presses, kill -9 the daemon at once, start it again"
for _ in 1 2; do press; done
kill -9 "$daemon"; wait "$daemon" 2>/dev/null || true
start_daemon
wait_drained
echo "== offline: the backend stops; 4 presses queue on the device"
stop_backend
for _ in 1 2 3 4; do press; done
sleep 1.5
uplink_line
snapshot offline
"$bin" queue "${args[@]}" | grep -E ' queued ' | sed 's/^/  /' | cut -c1-150 || true
echo "== the backend returns: the queue drains"
start_backend
wait_drained
uplink_line
snapshot drained
echo "== rate limit: the backend answers the next upload with 429 Retry-After: 5"
curl -fsS -X POST -H 'Content-Type: application/json' --data '{"faults":["upload:429-seconds:5"]}' "$url"_faults >/dev/null
press; press
sleep 1.5
uplink_line
snapshot rate-limited
wait_drained
echo "== a refused key: the backend answers the next upload with 401"
curl -fsS -X POST -H 'Content-Type: application/json' --data '{"faults":["upload:401"]}' "$url"_faults >/dev/null
press
for _ in $(seq 1 100); do "$bin" status "${args[@]}" | grep -q '^backend: unauthorized' && break; sleep 0.1; done
uplink_line
snapshot unauthorized
"$bin" queue "${args[@]}" | grep -E ' failed ' | sed 's/^/  /' | cut -c1-160 || true
echo "== the operator fixes the key and retries (a long press of the button does the same)"
"$bin" queue retry --all "${args[@]}" | sed 's/^/  retried /'
wait_drained
snapshot "done"
echo
"$bin" status "${args[@]}"
echo
echo "== the library"
"$bin" library "${args[@]}"
echo
echo "== the backend's view: jobs created (one per scan), cleanups"
stats=$(curl -fsS "$url"_stats)
for key in jobsCreated uploads streamsOpened resumes; do
  printf '  %-14s %s\n' "$key" "$(printf '%s' "$stats" | grep -o "\"$key\":[0-9]*" | cut -d: -f2)"
done
printf '  %-14s %s\n' cleanups "$(printf '%s' "$stats" | grep -o '"cleanups":\[[^]]*\]' | grep -o 'job_' | wc -l)"
echo
echo "== identified on the device, in a library of its own: a shelf with a book's barcode label;"
echo "   the network is down (the backend, which is also the catalogue here, is stopped)"
[ -x "$scenes_bin" ] || { echo "no $scenes_bin: build it with 'swift build --product DemoScenes'"; exit 1; }
isbn=$("$scenes_bin" "$demo/scenes")
stop_daemon
stop_backend
mkdir -p "$demo/identify"
args=(--state-dir "$demo/identify/state" --control-socket "$demo/identify/control.sock" --config "$demo/swiftwing.toml")
start_daemon "synthetic:$demo/scenes/barcode"
press
"$bin" queue "${args[@]}" | sed 's/^/  /' | cut -c1-160
"$bin" library "${args[@]}" | head -n 1 | sed 's/^/  library: /'
snapshot identified
echo "== the catalogue answers again: the same book gets its title"
start_backend
for _ in $(seq 1 300); do
  "$bin" library --json "${args[@]}" | grep -q '"enrichmentStatus" : "success"' && break
  sleep 0.2
done
"$bin" library "${args[@]}" | sed 's/^/  library: /'
"$bin" library --json "${args[@]}" | grep -q "\"isbn13\" : \"$isbn\"" || { echo "  (ISBN $isbn was not read)"; exit 1; }
snapshot enriched
echo "== a blurred frame (a shaking hand): refused with a warning, kept on the device with its quality"
stop_daemon
start_daemon "synthetic:$demo/scenes/blurred"
press
"$bin" queue "${args[@]}" | grep -E ' needs_attention ' | sed 's/^/  /' | cut -c1-200 || true
"$bin" queue --json "${args[@]}" | grep -m 3 -E '"(verdict|sharpness|mean)"' | sed 's/^ */  quality: /'
snapshot blurred
stop_daemon
stop_backend

echo
echo "== the recognizer: the two shelf photos read offline and matched against the library's catalogue"
recognizer_bin=$(dirname "$bin")/swiftwing-recognizer
recognizer_log="$demo/recognizer.log"
recognizer=""
read_shelves() {
  [ -x "$recognizer_bin" ] || { echo "  $recognizer_bin is not built (make build builds it)"; return 0; }
  "$recognizer_bin" serve --catalogue Fixtures/library-dataset/catalogue.csv --port "$port" >>"$recognizer_log" 2>&1 &
  recognizer=$!
  for _ in $(seq 1 600); do
    grep -q "listening on" "$recognizer_log" 2>/dev/null && break
    if ! kill -0 "$recognizer" 2>/dev/null; then
      recognizer=""
      echo "  the recognizer did not start: $(grep -m1 -i error "$recognizer_log" || tail -1 "$recognizer_log")"
      echo "  (it needs the OCR worker's environment: scripts/ocr-venv.sh makes it; log: $recognizer_log)"
      return 0
    fi
    sleep 0.1
  done
  for photo in one_shelf:20221128_101635_0 two_shelves:20221128_100245_1; do
    file="Fixtures/shelves/${photo%%:*}.jpg"
    answer=$(curl -sS --max-time 30 -H "X-Device-ID: demo" -H "Idempotency-Key: demo-${photo%%:*}" \
      -F "photos[]=@$file;type=image/jpeg;filename=spine.jpg" "$url"v3/jobs/scans) || { echo "  upload failed"; continue; }
    job=$(printf '%s' "$answer" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["jobId"])')
    token=$(printf '%s' "$answer" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["authToken"])')
    # The job's event stream ends with its terminal event; then the results carry the books and unmatched spines.
    curl -sS -N --max-time 600 -H "Authorization: Bearer $token" "${url}v3/jobs/scans/$job/stream" >"$demo/$job.events" || true
    curl -sS --max-time 30 "${url}v3/jobs/scans/$job/results" >"$demo/$job.results" || true
    python3 - "$file" "${photo##*:}" "$demo/$job.results" "$demo/$job.events" <<'PY'
import csv, json, sys
photo, image, results_path, events_path = sys.argv[1:]
try:
    data = json.load(open(results_path))["data"]
except Exception:
    failed = [l for l in open(events_path) if l.startswith("data:") and '"error"' in l]
    print(f"  {photo}: the job did not complete: {failed[-1][5:].strip() if failed else 'no answer'}")
    sys.exit(0)
books = data.get("results", [])
annotated = [r for r in csv.DictReader(open("Fixtures/library-dataset/annotations.csv"))
             if r["image_name"].startswith(image) and r["title"].strip()]
titles = {r["title"].strip().rstrip(" :").lower() for r in annotated}
right = sum(1 for b in books if (b.get("title") or "").strip().rstrip(" :").lower() in titles)
print(f"  {photo}: {len(books)} books found, {right} of them annotated on this photo "
      f"({len(annotated)} annotated books); {len(data.get('unmatched', []))} spines read but not matched")
for b in sorted(books, key=lambda b: (b.get("boundingBox") or {}).get("x", 0)):
    mark = "=" if (b.get("title") or "").strip().rstrip(" :").lower() in titles else "?"
    print(f"    {mark} {b.get('confidence', 0):.2f}  {b.get('title')}  [read: {(b.get('text') or '')[:50]}]")
print("    annotated:", "; ".join(sorted(r["title"].strip().rstrip(" :") for r in annotated))[:600])
PY
  done
  kill -TERM "$recognizer" 2>/dev/null; wait "$recognizer" 2>/dev/null || true; recognizer=""
}
read_shelves

echo
echo "== logs: daemon $log, backend $backend_log, recognizer $recognizer_log; panel pictures $demo/panel-*.png"
