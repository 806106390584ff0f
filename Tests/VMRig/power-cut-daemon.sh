#!/usr/bin/env bash
# Power cuts of the real daemon, on the power-cut harness (power-cut.sh): the
# daemon's state directory is on an ext4 image on a virtio disk (run.sh --disk). Each boot but
# the last is one cut: it mounts the disk, checks what the previous cuts left (SQLite
# `PRAGMA integrity_check` is "ok"; every scan acknowledged before any cut is in `swiftwing
# queue --json` exactly once, and its photo is on the disk unless it is done), then starts the
# daemon on vivid and presses the shutter over and over, printing "acked <id>" to stdout only after
# `swiftwing shutter` returned the id. The reference backend runs on the host for the whole test,
# so it outlives every cut and keeps its jobs (run.sh --net: the guest reaches it at 10.0.2.2,
# through a forwarder on the guest's loopback, the only place the daemon sends plain http); its
# uploads answer after 1.5 s and its streams last 3 s, so most of the time some scan is uploading
# or streaming. The host cuts the power (QMP quit) at a random moment after the boot's first
# acknowledged press (0-6 s) or, every third cut, after the daemon came up (0-2 s, while it
# recovers and re-sends the earlier scans): mid-capture, mid-upload, mid-stream or mid-commit.
# The last boot replays the journal and runs e2fsck -fn, checks the same, then runs the daemon
# until every scan is done, each acknowledged one exactly once, and checks the database once more
# after the daemon stopped, and the backend's /_stats: one job per scan, no book twice in the
# library, none of the backend's books missing.
#   SWIFTWING_POWERCUT_CUTS=N   number of cuts (default 3; each is one boot; the long run is 20)
# Needs `swift build --product swiftwing && swift build --product talaria-reference` on the host.
# Run alone (N+1 boots): Tests/VMRig/power-cut-daemon.sh
VM_TEST_TIMEOUT=180
here="$(cd "$(dirname "$0")" && pwd)"
sd="$here/../../scripts/vm/state-disk.sh"

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # ---- host: N cut boots and a final check boot ----
    set -uo pipefail
    run="$here/../../scripts/vm/run.sh"
    export PATH="$PATH:/usr/sbin:/sbin"
    command -v mkfs.ext4 >/dev/null || { echo "skipped: no mkfs.ext4 on the host (e2fsprogs)"; exit 77; }
    cuts="${SWIFTWING_POWERCUT_CUTS:-3}"
    for f in .build/debug/swiftwing .build/debug/talaria-reference; do
        [ -x "$f" ] || { echo "skipped: no $f (build first: swift build --product ${f##*/})"; exit 77; }
    done
    dir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-powercut-daemon.XXXXXX")"
    .build/debug/talaria-reference --port 0 --port-file "$dir/port" --recognition-delay-ms 3000 \
        --fault upload:slow:1500 >"$dir/backend.log" 2>&1 &
    backend=$!
    trap 'kill "$backend" 2>/dev/null; wait "$backend" 2>/dev/null; rm -rf "$dir"' EXIT
    for _ in $(seq 1 300); do [ -s "$dir/port" ] && break; sleep 0.1; done
    [ -s "$dir/port" ] || {
        echo "not ok 1 - the reference backend did not start on the host"; cat "$dir/backend.log"; exit 1
    }
    SWIFTWING_POWERCUT_BACKEND_PORT="$(cat "$dir/port")"
    export SWIFTWING_POWERCUT_BACKEND_PORT
    stats() { curl -sS --max-time 10 "http://127.0.0.1:$SWIFTWING_POWERCUT_BACKEND_PORT/_stats"; }
    "$sd" create "$dir/state.img" 512M
    : >"$dir/acked"
    export SWIFTWING_POWERCUT_ACKED="$dir/acked"
    failed=0 n=0 start=$SECONDS
    for ((k = 1; k <= cuts; k++)); do
        if ((k % 3 == 0)); then
            marker='^ready$' delay="$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", r / 32767 * 2 }')"
        else
            marker='^acked ' delay="$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", r / 32767 * 6 }')"
        fi
        t=$SECONDS st=0
        before="$(stats)"
        SWIFTWING_POWERCUT_PHASE=cut SWIFTWING_POWERCUT_BOOT=$k "$run" --timeout "$VM_TEST_TIMEOUT" \
            --net --disk "$dir/state.img" --cut-on "$marker" --cut-after "$delay" -- "$here/power-cut-daemon.sh" \
            >"$dir/out.$k" 2>"$dir/err.$k" || st=$?
        if [ "$st" = 77 ]; then cat "$dir/err.$k"; exit 77; fi
        grep -E '^(not ok|#)' "$dir/out.$k" | sed "s/^/# boot $k: /"
        # What the backend saw of this boot, and what the cut left open there.
        jq -rn --argjson a "$before" --argjson b "$(stats)" --arg k "$k" '"# boot \($k): backend: "
            + "+\($b.uploads - $a.uploads) uploads, +\($b.streamsOpened - $a.streamsOpened) streams "
            + "(\($b.resumes - $a.resumes) resumed), +\($b.jobsCreated - $a.jobsCreated) jobs; at the cut "
            + "\([$b.jobStatus[] | select(. != "completed")] | length) job(s) still recognising"'
        new="$(grep -cE '^acked [0-9a-fA-F-]{36}$' "$dir/out.$k")"
        at_risk="$(wc -l <"$dir/acked")"
        grep -E '^acked [0-9a-fA-F-]{36}$' "$dir/out.$k" | awk -v k="$k" '{ print k, $2 }' >>"$dir/acked"
        n=$((n + 1))
        if [ "$st" = 0 ] && ! grep -q '^not ok' "$dir/out.$k"; then
            echo "ok $n - cut $k: $(sed -n 's/.*\(power cut (QMP quit)\)/\1/p' "$dir/err.$k" | head -n 1); ${new} press(es) acked in this boot, ${at_risk} earlier acked scan(s) checked at its start; $((SECONDS - t)) s"
        else
            failed=$((failed + 1))
            echo "not ok $n - cut $k: status $st (0 = cut while the command ran) or a failed check"
            sed 's/^/#   /' "$dir/out.$k" "$dir/err.$k" | tail -n 40
        fi
    done
    t=$SECONDS st=0
    mkdir -p "$dir/logs"
    SWIFTWING_POWERCUT_PHASE=final "$run" --timeout "$((VM_TEST_TIMEOUT + 150))" --net \
        --disk "$dir/state.img" --out "$dir/logs" \
        -- "$here/power-cut-daemon.sh" >"$dir/out.final" 2>"$dir/err.final" || st=$?
    sed 's/^/# final: /' "$dir/out.final"
    if [ -f "$dir/logs/daemon.log" ]; then
        echo "# final boot, the daemon's log lines above INFO, by message:"
        grep -vE "^(INFO|DEBUG|TRACE) " "$dir/logs/daemon.log" | sed "s/ (.*//" | sort | uniq -c | sort -rn | head -n 8 | sed "s/^/#   /"
        [ -z "${SWIFTWING_POWERCUT_LOGS:-}" ] || { mkdir -p "$SWIFTWING_POWERCUT_LOGS"; cp "$dir/logs/"*.log "$SWIFTWING_POWERCUT_LOGS/"; }
    fi
    n=$((n + 1))
    if [ "$st" = 0 ]; then
        echo "ok $n - final boot: every one of $(wc -l <"$dir/acked") acked scans present once and done ($((SECONDS - t)) s)"
        echo "# backend: $(stats | jq -c \
            '{jobsCreated, uploads, streamsOpened, resumes, statusPolls, cleanups: (.cleanups | length)}')"
    else
        failed=$((failed + 1)); echo "not ok $n - final boot (status $st)"; tail -n 20 "$dir/err.final" | sed 's/^/#   /'
    fi
    echo "# $cuts power cuts, $(wc -l <"$dir/acked") acked scans at risk in total, $((SECONDS - start)) s"

    echo "1..$n"
    [ "$failed" = 0 ]
    exit $?
fi

. "$here/../../scripts/vm/testlib.sh"
bin=.build/debug/swiftwing
mnt=/var/lib/swiftwing-vm-state
work="$(mktemp -d)"
port=8787
cat >"$work/swiftwing.toml" <<'EOF'
[backend]
probe_interval_seconds = 0.5
round_interval_seconds = 2.0
EOF
args=(--config "$work/swiftwing.toml" --state-dir "$mnt/state" --control-socket "$work/control.sock")
acked="${SWIFTWING_POWERCUT_ACKED:?}"
phase="${SWIFTWING_POWERCUT_PHASE:?}"
n_acked="$(wc -l <"$acked")"

# What the cuts so far must have left: a sound database, every acked scan exactly once.
check_state() {
    local when="$1" db="$mnt/state/swiftwing.sqlite" queue bad
    vm_expect "$when: PRAGMA integrity_check" "$(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1 | tr '\n' ' ' | sed 's/ $//')" ok
    queue="$("$bin" queue --json "${args[@]}" 2>&1)"
    vm_check "$when: swiftwing queue --json opens the database" jq -e '.scans' <<<"$queue"
    printf '%s\n' "$queue" >"$work/queue.json"
    # every acked id: its number of rows, and whether its photo is there (a done scan's may be gone)
    bad="$(jq -r '.scans[] | "\(.id | ascii_downcase) \(.state) \(.imagePath)"' "$work/queue.json" | awk -v acked="$acked" '
        FILENAME == acked { want[tolower($2)] = 1; next }
        { rows[$1]++; state[$1] = $2; path[$1] = $3 }
        END {
            for (id in want) {
                if (rows[id] != 1) { print id " rows=" rows[id] + 0; continue }
                if (state[id] != "done" && (system("test -s \"" path[id] "\"") != 0)) print id " " state[id] " photo missing: " path[id]
            }
        }' "$acked" -)"
    vm_expect "$when: acked scans (of $n_acked) missing, twice, or without their photo" "$(grep -c . <<<"$bad")" 0
    [ -z "$bad" ] || printf '%s\n' "$bad" | sed 's/^/#   /'
    vm_note "$when: queue: $(jq -r '[.scans[].state] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' "$work/queue.json") ($(jq '.scans | length' "$work/queue.json") scans)"
}

host_port="${SWIFTWING_POWERCUT_BACKEND_PORT:?}"
start_services() {
    # The daemon sends plain http to loopback only: a forwarder there to the host's backend.
    socat "TCP-LISTEN:$port,bind=127.0.0.1,fork,reuseaddr" "TCP:10.0.2.2:$host_port" 2>"$work/socat.log" &
    backend=$!
    SWIFTWING_CAMERA_WIDTH=1280 SWIFTWING_CAMERA_HEIGHT=720 "$bin" run "${args[@]}" --camera /dev/video0 --backend "http://127.0.0.1:$port/" >"$work/daemon.log" 2>&1 &
    daemon=$!
    for _ in $(seq 1 600); do
        "$bin" status "${args[@]}" 2>/dev/null | grep -q "camera: .*streaming" && return 0
        sleep 0.1
    done
    echo "# the daemon did not come up:"; tail -n 20 "$work/daemon.log" | sed 's/^/#   /'
    return 1
}

if [ "$phase" = cut ]; then
    "$sd" mount /dev/vda "$mnt" >/dev/null || { vm_not_ok "mount /dev/vda"; vm_finish; }
    [ "${SWIFTWING_POWERCUT_BOOT:-1}" = 1 ] || check_state "after cut $((SWIFTWING_POWERCUT_BOOT - 1))"
    start_services || { vm_not_ok "daemon up"; vm_finish; }
    echo ready
    for _ in $(seq 1 1000); do
        if id="$("$bin" shutter "${args[@]}" 2>/dev/null)"; then echo "acked $id"; fi
    done
    echo "the presses ran out before the power cut" >&2
    exit 1
fi

# ---- the final boot ----
chk="$("$sd" check /dev/vda 2>&1)"; st=$?
printf '%s\n' "$chk" | grep -E 'replayed|clean|error' | sed 's/^/# e2fsck: /'
vm_expect "after the last cut: journal replay, then e2fsck -fn finds nothing" "$st" 0
"$sd" mount /dev/vda "$mnt" >/dev/null || { vm_not_ok "mount /dev/vda"; vm_finish; }
check_state "after the last cut"
start_services; vm_expect "the daemon comes up with the backend" "$?" 0
t0=$SECONDS
want="$(awk '{ print tolower($2) }' "$acked" | sort -u)"
left="" open=""
for _ in $(seq 1 600); do
    "$bin" queue --json "${args[@]}" >"$work/queue.json" 2>/dev/null
    done_ids="$(jq -r '.scans[] | select(.state == "done") | .id | ascii_downcase' "$work/queue.json" | sort -u)"
    left="$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$done_ids"))"
    # the presses saved but not acknowledged before a cut are scans too, and go out like the others
    open="$(jq '[.scans[] | select(.state != "done")] | length' "$work/queue.json")"
    [ -z "$left" ] && [ "$open" = 0 ] && break
    sleep 0.5
done
vm_expect "acked scans (of $n_acked) not done after the daemon ran again with the backend" "$(grep -c . <<<"$left")" 0
vm_expect "scans not done at all" "$open" 0
vm_note "all done $((SECONDS - t0)) s after the daemon came up"
# The backend outlived every cut: one job per scan (a re-sent upload reuses its Idempotency-Key),
# each book once in the library, none of the backend's books missing.
stats="$(curl -sS --max-time 30 "http://10.0.2.2:$host_port/_stats")"
library="$("$bin" library --json "${args[@]}")"
jobs="$(jq .jobsCreated <<<"$stats")"
vm_expect "one backend job per scan (jobs created = scans)" "$jobs" "$(jq '.scans | length' "$work/queue.json")"
vm_expect "each job under one Idempotency-Key" "$(jq '.jobByIdempotencyKey | length' <<<"$stats")" "$jobs"
vm_expect "no book twice in the library" \
    "$(jq '[.books[] | .isbn13 // ("title:" + .title)] | length - (unique | length)' <<<"$library")" 0
vm_expect "none of the backend's books missing from the library" "$(jq -n --argjson s "$stats" --argjson l "$library" \
    '[$s.booksByJob[][]] - [$l.books[].isbn13] | unique | length')" 0
vm_note "backend: $(jq -c '{jobsCreated, uploads, streamsOpened, resumes}' <<<"$stats");" \
    "library: $(jq '.books | length' <<<"$library") books"
kill -TERM "$daemon"; wait "$daemon"; rc=$?
vm_expect "SIGTERM stops the daemon cleanly" "$rc" 0
kill -TERM "$backend" 2>/dev/null; wait "$backend" 2>/dev/null
check_state "after the last run"
cp "$work/daemon.log" "${SWIFTWING_VM_OUT:-$work}/" 2>/dev/null
vm_note "daemon log: $(grep -ciE 'error|warning' "$work/daemon.log") error/warning lines"
if [ "$vm_failed" != 0 ]; then tail -n 40 "$work/daemon.log" | sed 's/^/#   /'; fi
vm_finish
