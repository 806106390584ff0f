#!/usr/bin/env bash
# Power cuts of the real daemon (issue 5 item 7), on the power-cut harness (power-cut.sh): the
# daemon's state directory is on an ext4 image on a virtio disk (run.sh --disk). Each boot but
# the last is one cut: it mounts the disk, checks what the previous cuts left (SQLite
# `PRAGMA integrity_check` is "ok"; every scan acknowledged before any cut is in `swiftwing
# queue --json` exactly once, and its photo is on the disk unless it is done), then starts the
# reference backend on the guest's loopback and the daemon on vivid uploading to it, and presses
# the shutter over and over, printing "acked <id>" to stdout only after `swiftwing shutter`
# returned the id. The host cuts the power (QMP quit) at a random moment after the boot's first
# acknowledged press (0-6 s) or, every third cut, after the daemon came up (0-2 s, while it
# recovers and re-uploads the earlier scans): mid-capture, mid-upload or mid-commit.
# A fresh backend each boot knows none of the earlier jobs: the daemon restarts those (README,
# "The backend link"). The last boot replays the journal and runs e2fsck -fn, checks the same,
# then runs the daemon with the backend until every acknowledged scan is done, each exactly once,
# and checks the database once more after the daemon stopped.
#   SWIFTWING_POWERCUT_CUTS=N   number of cuts (default 4; each is one boot)
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
    cuts="${SWIFTWING_POWERCUT_CUTS:-4}"
    dir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-powercut-daemon.XXXXXX")"
    trap 'rm -rf "$dir"' EXIT
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
        SWIFTWING_POWERCUT_PHASE=cut SWIFTWING_POWERCUT_BOOT=$k "$run" --timeout "$VM_TEST_TIMEOUT" \
            --disk "$dir/state.img" --cut-on "$marker" --cut-after "$delay" -- "$here/power-cut-daemon.sh" \
            >"$dir/out.$k" 2>"$dir/err.$k" || st=$?
        if [ "$st" = 77 ]; then cat "$dir/err.$k"; exit 77; fi
        grep -E '^(not ok|#)' "$dir/out.$k" | sed "s/^/# boot $k: /"
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
    SWIFTWING_POWERCUT_PHASE=final "$run" --timeout "$((VM_TEST_TIMEOUT + 150))" --disk "$dir/state.img" --out "$dir/logs" \
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
    else
        failed=$((failed + 1)); echo "not ok $n - final boot (status $st)"; tail -n 20 "$dir/err.final" | sed 's/^/#   /'
    fi
    echo "# $cuts power cuts, $(wc -l <"$dir/acked") acked scans at risk in total, $((SECONDS - start)) s"
    echo "1..$n"
    [ "$failed" = 0 ]
    exit $?
fi

. "$here/../../scripts/vm/testlib.sh"
bin=.build/debug/swiftwing ref=.build/debug/talaria-reference
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

start_services() {
    ip link set lo up 2>/dev/null || ifconfig lo up
    "$ref" --port "$port" --recognition-delay-ms 200 >"$work/backend.log" 2>&1 &
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
left=""
for _ in $(seq 1 600); do
    done_ids="$("$bin" queue --json "${args[@]}" 2>/dev/null | jq -r '.scans[] | select(.state == "done") | .id | ascii_downcase' | sort -u)"
    left="$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$done_ids"))"
    [ -z "$left" ] && break
    sleep 0.5
done
vm_expect "acked scans (of $n_acked) not done after the daemon ran again with the backend" "$(grep -c . <<<"$left")" 0
vm_note "all done $((SECONDS - t0)) s after the daemon came up"
kill -TERM "$daemon"; wait "$daemon"; rc=$?
vm_expect "SIGTERM stops the daemon cleanly" "$rc" 0
kill -TERM "$backend" 2>/dev/null; wait "$backend" 2>/dev/null
check_state "after the last run"
cp "$work/daemon.log" "$work/backend.log" "${SWIFTWING_VM_OUT:-$work}/" 2>/dev/null
vm_note "backend: $(grep -c . "$work/backend.log") log lines; daemon log: $(grep -ciE 'error|warning' "$work/daemon.log") error/warning lines"
if [ "$vm_failed" != 0 ]; then tail -n 40 "$work/daemon.log" | sed 's/^/#   /'; fi
vm_finish
