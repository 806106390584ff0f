#!/usr/bin/env bash
# A camera that goes away and comes back is reopened by the running daemon, with no restart:
# the real daemon streams from vivid, takes presses, then vivid's platform device is unbound from
# its driver (what the kernel does when a USB camera is pulled: /dev/video0 disappears under the
# open descriptor) and bound again (plugged back in). Presses while it is gone are refused at once
# with the reason; presses after it returns are saved; every acknowledged press is one queued
# JPEG. Needs `swift build` on the host first. Run alone (boots a guest): Tests/VMRig/camera-return.sh
VM_TEST_TIMEOUT=420
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

bin=.build/debug/swiftwing
vm_require_built "$bin" 'swift build'
work="$(mktemp -d)"
: >"$work/swiftwing.toml"
args=(--config "$work/swiftwing.toml" --state-dir "$work/state" --control-socket "$work/control.sock")
driver=/sys/bus/platform/drivers/vivid

camera_line() { "$bin" status "${args[@]}" 2>/dev/null | grep '^camera:'; }
wait_camera() {  # wait_camera PATTERN SECONDS
    local _
    for _ in $(seq 1 $(($2 * 10))); do
        camera_line | grep -qE "$1" && return 0
        sleep 0.1
    done
    return 1
}
press() {  # press LABEL: appends the scan id to ids, or notes the refusal
    local id
    if id="$("$bin" shutter "${args[@]}" 2>&1)"; then ids+=("$id"); else vm_note "press $1 refused: $id"; return 1; fi
}

device="$(basename "$(readlink -f /sys/class/video4linux/video0/device)")"
vm_check "vivid's platform device is bound to its driver ($device)" test -e "$driver/$device"

SWIFTWING_CAMERA_WIDTH=1280 SWIFTWING_CAMERA_HEIGHT=720 "$bin" run "${args[@]}" --camera /dev/video0 \
    >>"$work/daemon.log" 2>&1 &
daemon=$!
wait_camera "streaming" 60; vm_expect "the daemon starts and the camera streams" "$?" 0

ids=()
press 1 && press 2
vm_expect "presses before the unplug acknowledged" "${#ids[@]}" 2

# Unplug: the driver lets go of the device; /dev/video0 goes away under the daemon's open descriptor.
echo "$device" >"$driver/unbind"
wait_camera "reopening|not available|lost" 30; vm_expect "the daemon notices the camera is gone" "$?" 0
vm_check "/dev/video0 is gone" test ! -e /dev/video0
camera_line | sed 's/^/#   /'
t0=$(date +%s%N)
refused="$("$bin" shutter "${args[@]}" 2>&1)"; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
vm_check "a press without a camera is refused (exit $rc, ${ms} ms): $refused" test "$rc" -ne 0
vm_check "the refusal names the camera" grep -qi "camera\|video0" <<<"$refused"

# Plug back in: the same device node returns; the daemon must reopen it by itself.
echo "$device" >"$driver/bind"
for _ in $(seq 1 100); do [ -e /dev/video0 ] && break; sleep 0.1; done
t0=$(date +%s%N)
wait_camera "streaming" 60; vm_expect "the camera is reopened without a restart" "$?" 0
vm_note "reopened $((($(date +%s%N) - t0) / 1000000)) ms after the device returned"
camera_line | sed 's/^/#   /'
vm_check "status counts the reopen" bash -c "'$bin' status ${args[*]} | grep -qE '[1-9][0-9]* reopens'"
vm_check "the daemon is the same process" kill -0 "$daemon"

press 3 && press 4
vm_expect "presses after the camera returned acknowledged" "${#ids[@]}" 4
queue="$("$bin" queue --json "${args[@]}")"
vm_expect "every acknowledged press is one queued scan" "$(grep -c '"state" : "queued"' <<<"$queue")" 4
for id in "${ids[@]}"; do
    vm_check "scan $id has its 1280x720 JPEG" bash -c "file -b '$work/state/spool/$id.jpg' | grep -q '1280x720'"
done
grep -E 'camera (lost|reopened)|cannot reopen' "$work/daemon.log" | head -5 | sed 's/^/#   /'
kill -TERM "$daemon"; wait "$daemon"; rc=$?
vm_expect "SIGTERM stops the daemon cleanly" "$rc" 0
vm_finish
