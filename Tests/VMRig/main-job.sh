#!/usr/bin/env bash
# The main job, end to end in one guest: the reference backend on the guest's
# loopback (`talaria-reference --recognition-delay-ms 200`), the daemon on vivid (`--camera
# /dev/video0`) drawing its panel on vfb (`--panel fb:/dev/fb0`) and uploading to that backend
# (`--backend http://127.0.0.1:PORT/`). Ten presses (`swiftwing shutter`) give ten scan ids; all
# ten end `done` in `swiftwing queue --json`; `swiftwing library --json` has books, every book
# from one of the ten scans, no ISBN-13 twice, and every book the backend made for each scan
# (its log) committed by the daemon (its log) and in the library;
# the backend's `/_stats` counts exactly ten jobs created; the panel's "latest book" box, read
# back from /dev/fb0, is not blank and differs from the one drawn before any book landed.
# Needs `swift build --product swiftwing && swift build --product talaria-reference` on the host.
# Run alone (boots a guest): Tests/VMRig/main-job.sh
VM_TEST_TIMEOUT=420
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

bin=.build/debug/swiftwing ref=.build/debug/talaria-reference
for b in "$bin" "$ref"; do
    vm_require_built "$b" 'swift build --product swiftwing && swift build --product talaria-reference'
done
t0="$(date +%s.%N)"
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
work="$(mktemp -d)"
port=8787
ip link set lo up 2>/dev/null || ifconfig lo up   # the rig's guest has no network; loopback only
cat >"$work/swiftwing.toml" <<'EOF'
[backend]
probe_interval_seconds = 0.5
round_interval_seconds = 2.0
EOF
args=(--config "$work/swiftwing.toml" --state-dir "$work/state" --control-socket "$work/control.sock")

"$ref" --port "$port" --recognition-delay-ms 200 >"$work/backend.log" 2>&1 &
backend=$!
SWIFTWING_CAMERA_WIDTH=1280 SWIFTWING_CAMERA_HEIGHT=720 "$bin" run "${args[@]}" --camera /dev/video0 --panel fb:/dev/fb0 --backend "http://127.0.0.1:$port/" \
    >"$work/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 1 600); do grep -q 'listening on http://127.0.0.1:' "$work/backend.log" && break; sleep 0.1; done
vm_check "the backend listens on the guest's loopback" grep -q "talaria-reference listening on http://127.0.0.1:$port" "$work/backend.log"
status=""
for _ in $(seq 1 600); do
    status="$("$bin" status --json "${args[@]}" 2>/dev/null)"
    grep -q '"connectivity" : "online"' <<<"$status" && grep -q 'streaming' <<<"$status" && break
    sleep 0.2
done
vm_check "the daemon streams from vivid" grep -q 'streaming' <<<"$status"
vm_expect "the uplink is online" "$(jq -r '.daemon.uplink.connectivity' <<<"$status")" online
vm_check "the daemon draws on /dev/fb0" grep -q 'status panel drawing (output=/dev/fb0' "$work/daemon.log"
vm_note "daemon and backend up after $(elapsed) s"

stride="$(cat /sys/class/graphics/fb0/stride)"
# The 640x480 layout (PanelLayout): the latest-book box is x 22..329, y 93..348 (the viewfinder
# on its right shows the live camera, so it is left out). Prints: non-black pixels, then a hash.
book_box() {
    od -An -v -tu2 -w"$stride" "$1" | awk '
        NR >= 94 && NR <= 349 { for (i = 23; i <= 330; i++) { if ($i != 0) n++; printf "%s ", $i } }
        END { printf "\n%d\n", n }' | { read -r px; read -r n; echo "$n $(md5sum <<<"$px" | cut -c1-12)"; }
}
sleep 1
dd if=/dev/fb0 of="$work/before.raw" bs="$stride" count=480 status=none
read -r before_px before_hash < <(book_box "$work/before.raw")

ids=()
for i in $(seq 1 10); do
    if id="$("$bin" shutter "${args[@]}" 2>&1)"; then ids+=("$id"); else vm_note "press $i: $id"; fi
done
vm_expect "presses acknowledged with a scan id" "${#ids[@]}" 10
vm_note "ten presses acknowledged after $(elapsed) s"

want="$(printf '%s\n' "${ids[@]}" | tr '[:upper:]' '[:lower:]' | sort)"
done_ids=""
for _ in $(seq 1 300); do
    queue="$("$bin" queue --json "${args[@]}" 2>/dev/null)"
    done_ids="$(jq -r '.scans[] | select(.state == "done") | .id' <<<"$queue" | tr '[:upper:]' '[:lower:]' | sort)"
    [ "$done_ids" = "$want" ] && break
    sleep 0.5
done
vm_note "all done after $(elapsed) s; states: $(jq -r '[.scans[].state] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' <<<"$queue")"
if [ "$done_ids" = "$want" ]; then vm_ok "the ten scans are done in the queue (and nothing else is there)"
else vm_not_ok "the ten scans are done in the queue: done: ${done_ids//$'\n'/ }, wanted: ${want//$'\n'/ }"; fi

library="$("$bin" library --json "${args[@]}")"
n_books="$(jq '.books | length' <<<"$library")"
vm_check "the library has books ($n_books)" test "$n_books" -ge 1
vm_expect "no ISBN-13 twice in the library" \
    "$(jq '[.books[].isbn13 | select(. != null)] | length - (unique | length)' <<<"$library")" 0
vm_expect "books from scans other than the ten" \
    "$(jq -r '.books[].scanId' <<<"$library" | tr '[:upper:]' '[:lower:]' | grep -cvxF "$want")" 0
# Each scan's books: the backend logs how many books it made for each idempotency key ("created
# job J (N books)"), the daemon how many it committed for that scan and their titles ("books
# landed in the library (books=M … scan_id=ID titles=A | B)"): M = N, and every title is in the
# library (a book another scan found first is kept once, under that scan). One awk for all ten:
# every process start costs 0.3-1 s under TCG.
jq -r '.books[].title' <<<"$library" >"$work/titles"
printf '%s\n' "${ids[@]}" >"$work/ids"
bad="$(awk '
    FILENAME == ARGV[1] { lib[$0] = 1; next }
    FILENAME == ARGV[2] { want[tolower($0)] = 1; next }
    FILENAME == ARGV[3] {
        if (match($0, /idempotency-key=[0-9a-fA-F-]+/)) {
            k = tolower(substr($0, RSTART + 16, RLENGTH - 16))
            if (match($0, /created job [^ ]+ \([0-9]+ books\)/)) { s = substr($0, RSTART, RLENGTH); sub(/.*\(/, "", s); sub(/ books\)/, "", s); made[k] = s }
        }
        next
    }
    /books landed in the library/ {
        if (!match($0, /scan_id=[0-9a-fA-F-]+/)) next
        k = tolower(substr($0, RSTART + 8, RLENGTH - 8))
        if (match($0, /[( ]books=[0-9]+/)) committed[k] = substr($0, RSTART + 7, RLENGTH - 7)
        t = $0; sub(/.* titles=/, "", t); sub(/\)$/, "", t)
        n = split(t, a, / \| /); titled[k] = n
        for (i = 1; i <= n; i++) if (!(a[i] in lib)) absent[k] = absent[k] " [" a[i] "]"
    }
    END {
        for (k in want) if (made[k] == "" || made[k] != committed[k] || titled[k] != made[k] || absent[k] != "")
            print "scan " k ": backend made " (made[k] == "" ? "?" : made[k]) " books, the daemon committed " (committed[k] == "" ? "?" : committed[k]) "; not in the library:" (absent[k] == "" ? " none" : absent[k])
    }' "$work/titles" "$work/ids" "$work/backend.log" "$work/daemon.log")"
vm_expect "scans whose books (backend's count, daemon's titles) are not all in the library" "$(grep -c . <<<"$bad")" 0
[ -z "$bad" ] || printf '%s\n' "$bad" | sed 's/^/#   /'

stats="$(curl -s -f "http://127.0.0.1:$port/_stats")"
vm_expect "the backend created exactly ten jobs (/_stats jobsCreated)" "$(jq -r '.jobsCreated' <<<"$stats")" 10
vm_note "backend: $(jq -c '{uploads, streamsOpened, resumes, statusPolls, resultsFetches, cleanups: (.cleanups | length)}' <<<"$stats")"

sleep 1.5   # the panel redraws at most a few times a second
dd if=/dev/fb0 of="$work/after.raw" bs="$stride" count=480 status=none
read -r after_px after_hash < <(book_box "$work/after.raw")
last_title="$(jq -r '.books | max_by(.updatedAt) | .title' <<<"$library")"
vm_note "latest-book box: $before_px non-black pixels before the books ($before_hash), $after_px after ($after_hash); newest book: $last_title"
vm_check "the latest-book box is not blank" test "$after_px" -ge 500
vm_check "the latest-book box changed when the books landed" test "$before_hash" != "$after_hash"
if [ -n "${SWIFTWING_VM_OUT:-}" ]; then cp "$work/before.raw" "$work/after.raw" "$SWIFTWING_VM_OUT/" 2>/dev/null; fi

kill -TERM "$daemon"; wait "$daemon"; rc=$?
vm_expect "SIGTERM stops the daemon cleanly" "$rc" 0
kill -TERM "$backend" 2>/dev/null; wait "$backend" 2>/dev/null
if [ "$vm_failed" != 0 ]; then
    echo "# daemon log (tail):"; tail -n 40 "$work/daemon.log" | sed 's/^/#   /'
    echo "# backend log (tail):"; tail -n 20 "$work/backend.log" | sed 's/^/#   /'
fi
vm_note "test body: $(elapsed) s"
vm_finish
