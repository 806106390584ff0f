#!/usr/bin/env bash
# The main job on one machine, with the real recognizer: `swiftwing-recognizer serve` on loopback (the
# Library Dataset catalogue shipped in Fixtures/library-dataset, searched before the shipped open
# catalogue; the OCR worker's environment .ocr-venv) and the daemon on the synthetic camera (the shipped
# shelf photos, Fixtures/shelves). Two presses, one per photo; the books land in the library, the spines it could not name for sure wait in the review
# list with their candidates. The status panel is drawn into a PNG and copied at each stage
# ($demo/panel-*.png); the web review page is shot at a phone's size (390x844) in Debian's headless
# chromium through selenium ($demo/review-390*.png), paired as a phone is, with a code.
# Then the fault scenes, against the reference backend (talaria-reference): a fault-injection backend
# whose hash "recognizer" reads nothing and makes its titles up. A power cut (kill -9) and restart, a
# spell offline (backend stopped) while pressing continues, reconnection and drain, a rate limit (429),
# a refused key (401); then that library.
# Then, with a library of its own, what the device identifies by itself: a book's barcode read with
# the network down, its title filled in when the catalogue answers, and a blurred frame refused.
# A part whose tools are missing is skipped and says so: the recognizer needs .ocr-venv
# (scripts/ocr-venv.sh), the screenshot chromium and chromium-driver (scripts/install-deps.sh test) and
# selenium in .web-test-venv (made here as scripts/web-browser-test.sh makes it, when there is none).
# Usage: scripts/demo.sh [path/to/swiftwing] [path/to/talaria-reference]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/debug/swiftwing}
backend_bin=${2:-$(dirname "$bin")/talaria-reference}
scenes_bin=$(dirname "$bin")/DemoScenes
recognizer_bin=$(dirname "$bin")/swiftwing-recognizer
web_bin=$(dirname "$bin")/swiftwing-web
web_python=${SWIFTWING_WEB_TEST_VENV:-.web-test-venv}/bin/python3
demo=${SWIFTWING_DEMO_DIR:-/tmp/swiftwing-demo}
started=$SECONDS

rm -rf "$demo"; mkdir -p "$demo"
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo "$1"
}

daemon=""; backend=""; recognizer=""; web=""
cleanup() {
  [ -n "$web" ] && kill -TERM "$web" 2>/dev/null && wait "$web" 2>/dev/null
  [ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  [ -n "$backend" ] && kill -TERM "$backend" 2>/dev/null && wait "$backend" 2>/dev/null
  [ -n "$recognizer" ] && kill -TERM "$recognizer" 2>/dev/null && wait "$recognizer" 2>/dev/null
  true
}
trap cleanup EXIT

# The daemon of the part being shown: its state, control socket and log (set by each part).
args=(); log=""

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

# Waits until no scan is on its way, at most $1 seconds (default 120).
wait_drained() {
  local until=$((SECONDS + ${1:-120}))
  while [ "$SECONDS" -lt "$until" ]; do
    [ "$(in_flight)" = 0 ] && return 0
    sleep 0.5
  done
  echo "  (still in flight after ${1:-120} s:)"; "$bin" queue "${args[@]}"
}

# The number of items in a JSON list on stdin (or in the first list of a JSON object), "?" if unreadable.
count_json() {
  python3 -c 'import json,sys
d = json.load(sys.stdin)
print(len(d if isinstance(d, list) else next((v for v in d.values() if isinstance(v, list)), [])))' 2>/dev/null || echo "?"
}

# How many different photos the scans were taken of (told apart by their sharpness).
distinct_photos() {
  "$bin" queue --json "${args[@]}" | python3 -c 'import json,sys
print(len({round(s["quality"]["sharpness"], 3) for s in json.load(sys.stdin)["scans"] if s.get("quality")}))' 2>/dev/null || echo "?"
}

uplink_line() { "$bin" status "${args[@]}" | grep -E '^backend:' || true; }
snapshot() { sleep 0.6; [ -f "$demo/panel.png" ] && cp "$demo/panel.png" "$demo/panel-$1.png" && echo "  panel: $demo/panel-$1.png"; }

# ---------------------------------------------------------------------------------------------------
# The main job: the real recognizer on loopback.
main="$demo/main"
mkdir -p "$main"
rec_log="$main/recognizer.log"
web_log="$main/web.log"
log="$main/daemon.log"
rec_port=$(free_port 18788)
web_port=$(free_port 18789)
rec_url="http://127.0.0.1:$rec_port/"
web_url="http://127.0.0.1:$web_port"
# No API key: the recognizer on loopback asks for none. Enrichment off: the recognizer's books carry their
# titles, and the demo stays off the internet.
cat > "$main/swiftwing.toml" <<EOF
[backend]
url = "$rec_url"
probe_interval_seconds = 1.0
round_interval_seconds = 5.0
[enrichment]
enabled = false
[web]
enabled = true
address = "127.0.0.1"
port = $web_port
EOF
args=(--state-dir "$main/state" --control-socket "$main/control.sock" --config "$main/swiftwing.toml")

# Starts the recognizer on the shipped catalogue; says why and returns 1 when it cannot.
start_recognizer() {
  [ -x "$recognizer_bin" ] || { echo "  SKIPPED: $recognizer_bin is not built (make build builds it)"; return 1; }
  local check
  if ! check=$("$recognizer_bin" serve --catalogue Fixtures/library-dataset/catalogue.csv --check 2>&1); then
    echo "  SKIPPED: the recognizer is not ready: $(printf '%s\n' "$check" | grep -v ' info ' | tail -2)"
    echo "  (its OCR worker needs .ocr-venv: scripts/ocr-venv.sh makes it)"
    return 1
  fi
  "$recognizer_bin" serve --catalogue Fixtures/library-dataset/catalogue.csv --port "$rec_port" >>"$rec_log" 2>&1 &
  recognizer=$!
  for _ in $(seq 1 600); do
    grep -q "listening on" "$rec_log" 2>/dev/null && return 0
    if ! kill -0 "$recognizer" 2>/dev/null; then
      recognizer=""
      echo "  SKIPPED: the recognizer did not start: $(grep -m1 -i error "$rec_log" || tail -1 "$rec_log")"
      return 1
    fi
    sleep 0.1
  done
  echo "  SKIPPED: the recognizer did not listen within 60 s (log: $rec_log)"; return 1
}

# Pairs a headless chromium with a code and shoots the review page at 390x844: its top ($demo/review-390.png), a
# spine with its candidates (review-390-candidates.png) and the whole page (review-390-full.png). Says what is
# missing instead when it cannot.
shoot_review() {
  local tool
  for tool in chromium chromedriver; do
    command -v "$tool" >/dev/null || { echo "  SKIPPED the screenshot: $tool not found (scripts/install-deps.sh test)"; return 0; }
  done
  # Made as scripts/web-browser-test.sh makes it (the same pinned wheels) when there is none; one already
  # there is left as it is.
  local venv=${web_python%/bin/python3}
  if [ ! -e "$venv" ]; then
    echo "  making $venv: selenium pinned in Tests/WebBrowser/requirements.txt (as scripts/web-browser-test.sh does)"
    if /usr/bin/python3 -m venv "$venv" >/dev/null 2>&1 \
      && "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        -r Tests/WebBrowser/requirements.txt; then
      cp Tests/WebBrowser/requirements.txt "$venv/.swiftwing-requirements"
    else
      echo "  (could not make $venv: python3-venv missing, or PyPI not reachable)"
    fi
  fi
  if ! { [ -x "$web_python" ] && "$web_python" -c 'import selenium' 2>/dev/null; }; then
    echo "  SKIPPED the screenshot: no selenium in ${web_python%/bin/python3} (scripts/web-browser-test.sh makes it)"
    return 0
  fi
  [ -x "$web_bin" ] || { echo "  SKIPPED the screenshot: $web_bin is not built"; return 0; }
  "$web_bin" --config "$main/swiftwing.toml" --state-dir "$main/state" --control-socket "$main/control.sock" \
    >>"$web_log" 2>&1 &
  web=$!
  for _ in $(seq 1 600); do
    grep -q "listening on" "$web_log" 2>/dev/null && break
    kill -0 "$web" 2>/dev/null || { web=""; echo "  SKIPPED the screenshot: swiftwing-web exited: $(tail -1 "$web_log")"; return 0; }
    sleep 0.1
  done
  local code
  code=$("$bin" web pair "${args[@]}" | grep -oE '\b[0-9]{6}\b' | head -n 1) || true
  [ -n "$code" ] || { echo "  SKIPPED the screenshot: swiftwing web pair printed no code"; return 0; }
  "$web_python" - "$web_url" "$code" "$demo/review-390.png" <<'PY' || echo "  the screenshot failed (above)"
import shutil, sys
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

url, code, shot = sys.argv[1:]
options = webdriver.ChromeOptions()
options.binary_location = shutil.which("chromium")
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=390,844", "--no-first-run", "--disable-extensions"):
    options.add_argument(argument)
driver = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver")))
try:
    # As a phone does: the pairing address with its code, then Pair.
    driver.get(f"{url}/pair?code={code}")
    driver.find_element(By.CSS_SELECTOR, 'form[action="/pair"] button[type=submit]').click()
    WebDriverWait(driver, 30).until(lambda d: d.get_cookie("swiftwing_session") is not None, "paired")
    driver.get(url + "/review")
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.TAG_NAME, "main"), "the review page")
    driver.set_window_size(390, 844)
    driver.save_screenshot(shot)
    # The whole page, as tall as it is, beside the phone's first screen.
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(390, min(int(height) + 140, 16000))
    driver.save_screenshot(shot.replace(".png", "-full.png"))
    main = driver.find_element(By.TAG_NAME, "main").text.splitlines()
    print(f"  review page {url}/review (paired with code {code}): {driver.title}")
    for line in main[:14]:
        print("   |", line[:110])
    print(f"  screenshot: {shot} (390x844), the whole page: {shot.replace('.png', '-full.png')}")
    # A phone's screen scrolled to a spine with candidates to tap: the first whose best candidate is 50 % or
    # more, else the first with any.
    driver.set_window_size(390, 844)
    best = None
    for item in driver.find_elements(By.CSS_SELECTOR, "section.spine-item"):
        buttons = item.find_elements(By.CSS_SELECTOR, "form.candidates button[name=candidate]")
        if not buttons:
            continue
        first = buttons[0].find_elements(By.CSS_SELECTOR, ".confidence")
        percent = int("".join(c for c in first[0].text if c.isdigit()) or 0) if first else 0
        if best is None or (percent >= 50 and best[1] < 50):
            best = (item, percent, len(buttons))
        if percent >= 50:
            break
    if best:
        driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", best[0])
        candidates = shot.replace(".png", "-candidates.png")
        driver.save_screenshot(candidates)
        read = best[0].find_element(By.CSS_SELECTOR, ".read").text
        print(f"  screenshot: {candidates} (390x844): {read} with {best[2]} candidates, the best at {best[1]} %")
    else:
        print("  (no spine on the page has candidates)")
finally:
    driver.quit()
PY
}

echo "== SwiftWing demo in $demo: the main job, with the real recognizer on loopback ($rec_url)"
echo "   swiftwing-recognizer serve --catalogue Fixtures/library-dataset/catalogue.csv; the daemon on the"
echo "   synthetic camera over the shipped shelf photos (Fixtures/shelves); the panel drawn into a PNG"
main_job="did not run (above: SKIPPED)"
if start_recognizer; then
  start_daemon
  echo "== 2 presses, one at each shelf photo; the recognizer reads each photo (OCR, several seconds a photo)"
  # The synthetic camera shows each photo for 2 s in turn: presses 2 s apart take the next one. A press that
  # still caught the same photo (the same sharpness) is followed by one more.
  press
  sleep 2
  press
  if [ "$(distinct_photos)" = 1 ]; then
    echo "  (the second press caught the same photo: one more)"; sleep 2; press
  fi
  snapshot analyzing
  recognized_from=$SECONDS
  wait_drained 1200
  echo "  recognized in $((SECONDS - recognized_from)) s after the presses"
  "$bin" queue "${args[@]}" | sed 's/^/  /' | cut -c1-150
  snapshot recognized
  echo
  "$bin" status "${args[@]}"
  echo
  echo "== the library: the books the recognizer named (oldest first)"
  "$bin" library "${args[@]}"
  echo
  echo "== the spines to check: read, but not named for sure; each with its candidates"
  "$bin" review list "${args[@]}" | head -n 40 || true  # head closes the pipe early: not a failure
  spines=$("$bin" review list --json "${args[@]}" | count_json)
  books=$("$bin" library --json "${args[@]}" | count_json)
  echo "  ($books books in the library, $spines spines to check; the whole list: swiftwing review list)"
  # The Library Dataset's annotations of the two photos (Fixtures/library-dataset) say which books are on them.
  "$bin" library --json "${args[@]}" | python3 -c 'import csv, json, sys
data = json.load(sys.stdin)
books = data if isinstance(data, list) else next((v for v in data.values() if isinstance(v, list)), [])
norm = lambda t: " ".join((t or "").lower().replace(":", " ").split())
rows = [r for r in csv.DictReader(open("Fixtures/library-dataset/annotations.csv"))
        if r["image_name"].startswith(("20221128_101635_0", "20221128_100245_1")) and r["title"].strip()]
isbns = {r["isbn"].strip() for r in rows if r["isbn"].strip()}
titles = {norm(r["title"]) for r in rows}
right = sum(1 for b in books if b.get("isbn13") in isbns or norm(b.get("title")) in titles)
print(f"  {right} of the {len(books)} books are among the {len(rows)} the Library Dataset annotates on these two photos")
print("  (whole photos; the camera frame is their 16:9 middle, so some annotated books are not in view)")' \
    2>/dev/null || echo "  (the library could not be compared with the dataset's annotations)"
  echo
  echo "== the review page on a phone"
  shoot_review
  if [ -n "$web" ]; then kill -TERM "$web"; wait "$web" 2>/dev/null || true; web=""; fi
  stop_daemon
  kill -TERM "$recognizer"; wait "$recognizer" 2>/dev/null || true; recognizer=""
  main_job="$books books, $spines spines to check"
  echo "== the main job took $((SECONDS - started)) s (logs: $log, $rec_log, $web_log)"
else
  echo "  (the main job needs the recognizer: the fault scenes below still run, against the reference backend)"
fi

# ---------------------------------------------------------------------------------------------------
# The fault scenes: the reference backend, for its fault injection.
echo
echo "== the fault scenes, against talaria-reference: the fault-injection backend. Its hash \"recognizer\""
echo "   reads nothing on the photos: the titles in this part are made up; what is shown is how the device"
echo "   rides out a crash, an outage, a rate limit and a refused key"
faults="$demo/faults"
mkdir -p "$faults"
log="$faults/daemon.log"
backend_log="$faults/backend.log"
# A throwaway key for this run: the backend demands it, the daemon reads it from a credential file.
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$faults/api-key"; chmod 600 "$faults/api-key"
port=$(free_port 18787)
url="http://127.0.0.1:$port/"
cat > "$faults/swiftwing.toml" <<EOF
[backend]
url = "$url"
api_key_file = "$faults/api-key"
probe_interval_seconds = 1.0
round_interval_seconds = 5.0
[enrichment]
base_url = "$url"
EOF
args=(--state-dir "$faults/state" --control-socket "$faults/control.sock" --config "$faults/swiftwing.toml")

start_backend() {
  "$backend_bin" --port "$port" --api-key-file "$faults/api-key" --recognition-delay-ms 1500 --retry-ms 1000 \
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

start_backend
start_daemon
echo "== online: pressing the shutter 3 times"
for _ in 1 2 3; do press; done
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
echo "== the fault scenes' library (made-up titles: the reference backend reads nothing), $(
  "$bin" library "${args[@]}" | wc -l) lines; the first 5:"
"$bin" library "${args[@]}" | head -n 5 || true
echo
echo "== the backend's view: jobs created (one per scan), cleanups"
stats=$(curl -fsS "$url"_stats)
for key in jobsCreated uploads streamsOpened resumes; do
  printf '  %-14s %s\n' "$key" "$(printf '%s' "$stats" | grep -o "\"$key\":[0-9]*" | cut -d: -f2)"
done
printf '  %-14s %s\n' cleanups "$(printf '%s' "$stats" | grep -o '"cleanups":\[[^]]*\]' | grep -o 'job_' | wc -l)"
echo
echo "== identified on the device, in a library of its own: a shelf with a book's barcode label;"
echo "   the network is down (the reference backend, which is also the catalogue here, is stopped)"
[ -x "$scenes_bin" ] || { echo "no $scenes_bin: build it with 'swift build --product DemoScenes'"; exit 1; }
isbn=$("$scenes_bin" "$demo/scenes")
stop_daemon
stop_backend
mkdir -p "$demo/identify"
args=(--state-dir "$demo/identify/state" --control-socket "$demo/identify/control.sock" --config "$faults/swiftwing.toml")
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
echo "== done in $((SECONDS - started)) s. The main job, on the real recognizer: $main_job"
for picture in panel-recognized review-390 review-390-candidates; do
  if [ -f "$demo/$picture.png" ]; then echo "   $demo/$picture.png"; else echo "   (no $picture.png: see above)"; fi
done
echo "   every panel picture: $demo/panel-*.png; logs: $demo/main/*.log, $demo/faults/*.log"
