#!/usr/bin/env bash
# The real daemon on a real V4L2 driver: `swiftwing doctor` opens vivid, then `swiftwing run
# --camera /dev/video0` serves presses from `swiftwing shutter`; each becomes a durable JPEG
# (scaled to <= 1920 px) and a queued row, also across a SIGKILL and a restart.
# Needs `swift build` on the host first. Run alone (boots a guest): Tests/VMRig/daemon-vivid.sh
VM_TEST_TIMEOUT=420
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

bin=.build/debug/swiftwing
vm_require_built "$bin" 'swift build'
work="$(mktemp -d)"
: >"$work/swiftwing.toml"
args=(--config "$work/swiftwing.toml" --state-dir "$work/state" --control-socket "$work/control.sock")

doctor="$("$bin" doctor "${args[@]}" --camera /dev/video0 2>&1)"; rc=$?
printf '%s\n' "$doctor" | sed 's/^/#   /'
vm_check "doctor finds the camera streaming and captures a 1920x1080 frame" \
    grep -q "ok   camera: /dev/video0: streaming.*captured a 1920x1080 frame" <<<"$doctor"

start_daemon() {
    SWIFTWING_CAMERA_WIDTH=2560 SWIFTWING_CAMERA_HEIGHT=1440 "$bin" run "${args[@]}" --camera /dev/video0 \
        >>"$work/daemon.log" 2>&1 &
    daemon=$!
    for _ in $(seq 1 600); do
        "$bin" status "${args[@]}" 2>/dev/null | grep -q "camera: .*streaming" && return 0
        sleep 0.1
    done
    return 1
}

start_daemon; vm_expect "daemon starts and the camera streams" "$?" 0
ids=()
for i in 1 2 3; do
    if id="$("$bin" shutter "${args[@]}" 2>&1)"; then ids+=("$id"); else vm_note "press $i: $id"; fi
done
kill -9 "$daemon"; wait "$daemon" 2>/dev/null
start_daemon; vm_expect "daemon restarts after SIGKILL and streams again" "$?" 0
for i in 4 5; do
    if id="$("$bin" shutter "${args[@]}" 2>&1)"; then ids+=("$id"); else vm_note "press $i: $id"; fi
done
vm_expect "presses acknowledged" "${#ids[@]}" 5

queue="$("$bin" queue --json "${args[@]}")"
vm_expect "queued rows" "$(grep -c '"state" : "queued"' <<<"$queue")" 5
for id in "${ids[@]}"; do
    jpg="$work/state/spool/$id.jpg"
    vm_check "scan $id: a 1920x1080 JPEG (long edge <= 1920)" \
        bash -c "file -b '$jpg' | grep -q '1920x1080'"
done
vm_check "frames came after their press (press_to_frame_ms never negative)" \
    bash -c "! grep -q 'press_to_frame_ms=-' '$work/daemon.log'"
grep -o 'press_to_frame_ms=[0-9.]*\|press_to_durable_ms=[0-9.]*' "$work/daemon.log" | tr '\n' ' ' | sed 's/^/# /'; echo
kill -TERM "$daemon"; wait "$daemon"; rc=$?
vm_expect "SIGTERM stops the daemon cleanly" "$rc" 0
vm_finish
