#!/usr/bin/env bash
# The daemon's own panel on a real framebuffer: `swiftwing run --panel fb:/dev/fb0` (synthetic
# camera) draws the status into vfb (boot mode 640x480 BGR565); two presses through the control
# socket land in the strip and the queue count. Checked on the read-back framebuffer: the mode the
# daemon logged, the OFFLINE marker in orange and the rule in white at their layout positions, and
# a picture that changed after the presses. With SWIFTWING_PANEL_OUT=DIR the two read-backs come
# back as PNGs (daemon-idle.png, daemon-after.png).
# Run alone (builds swiftwing and PanelProbe on the host if needed, then boots a guest): Tests/VMRig/panel-daemon.sh
VM_TEST_TIMEOUT=300

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    set -euo pipefail
    root="$(cd "$(dirname "$0")/../.." && pwd)"
    command -v swift >/dev/null 2>&1 || { echo "skipped: no swift on this host"; exit 77; }
    (cd "$root" && swift build --product swiftwing >/dev/null && swift build -c release --product PanelProbe >/dev/null) \
        || { echo "swiftwing or PanelProbe does not build" >&2; exit 1; }
    export SWIFTWING_PANEL_PROBE="$root/.build/release/PanelProbe" SWIFTWING_PANEL_BIN="$root/.build/debug/swiftwing"
    if [ -n "${SWIFTWING_PANEL_OUT:-}" ]; then
        mkdir -p "$SWIFTWING_PANEL_OUT"
        exec "$root/scripts/vm/run.sh" --timeout "$VM_TEST_TIMEOUT" --out "$SWIFTWING_PANEL_OUT" -- "$root/Tests/VMRig/panel-daemon.sh"
    fi
fi
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

probe="${SWIFTWING_PANEL_PROBE:?}" bin="${SWIFTWING_PANEL_BIN:?}"
d="$(mktemp -d)"
trap 'rm -rf "$d"' EXIT
out="${SWIFTWING_VM_OUT:-$d}"
: >"$d/c.toml"
args=(--state-dir "$d/state" --control-socket "$d/sock" --config "$d/c.toml")
stride="$(cat /sys/class/graphics/fb0/stride)"

"$bin" run "${args[@]}" --camera synthetic --panel fb:/dev/fb0 >"$d/log" 2>&1 &
daemon=$!
for _ in $(seq 1 240); do
    "$bin" status --json "${args[@]}" 2>/dev/null | grep -q '"running" : true' && break
    sleep 0.5
done
# Under TCG the synthetic camera needs a while to decode its photos: wait until it streams.
for _ in $(seq 1 120); do
    "$bin" status "${args[@]}" 2>/dev/null | grep -q "streaming" && break
    sleep 0.5
done
vm_check "the camera streams" sh -c "'$bin' status ${args[*]} | grep -q streaming"
vm_check "the daemon draws on /dev/fb0 in its real mode" \
    grep -q 'status panel drawing (output=/dev/fb0 (Virtual FB, 640x480 BGR565, line_length 1280))' "$d/log"
sleep 2
dd if=/dev/fb0 of="$d/idle.raw" bs="$stride" count=480 status=none
# The layout at 640x480: unit 24.6 px, margin 22, top bar 22..64, marker 18 px at (22,34), rule at y 71.
vm_check "OFFLINE marker is orange" "$probe" expect-pixel "$d/idle.raw" 30 43 FF3B30
vm_check "the rule under the top bar is white" "$probe" expect-pixel "$d/idle.raw" 320 71 FFFFFF
vm_check "press 1 saved" "$bin" shutter "${args[@]}"
vm_check "press 2 saved" "$bin" shutter "${args[@]}"
sleep 3
dd if=/dev/fb0 of="$d/after.raw" bs="$stride" count=480 status=none
vm_check "the picture changed after the presses" sh -c "! cmp -s '$d/idle.raw' '$d/after.raw'"
vm_check "the first thumbnail's border is gray (waiting: offline)" "$probe" expect-pixel "$d/after.raw" 23 380 8E8E93
kill -TERM "$daemon"
wait "$daemon"
vm_expect "the daemon stops cleanly on SIGTERM" "$?" 0
"$probe" dump "$d/idle.raw" "$out/daemon-idle.png"
"$probe" dump "$d/after.raw" "$out/daemon-after.png"
grep -q "headless" "$d/log" && vm_note "unexpected: $(grep headless "$d/log")"
vm_finish
