#!/usr/bin/env bash
# The panel on a real kernel framebuffer (vfb): PanelProbe opens /dev/fb0 through the FBIOGET_*
# ioctls and mmap, draws the 'idle' state in full and then each state below as damage only, and
# the framebuffer read back through read(2) must equal the PNG renderer's picture of the same state
# (exactly at 32 bpp, within RGB565's quantization at 16 bpp). At 16 bpp (boot mode) and 32 bpp
# (vfb reloaded). vfb's own bitfields are BGR (red at bit 0): BGR565 and XBGR8888 (alpha 24/8), so
# this also proves the copy follows the reported offsets rather than assuming RGB. At 16 bpp the
# virtual width is then set to 704 (line_length 1408 > 640*2) to check the stride and that the
# row padding stays untouched. With SWIFTWING_PANEL_OUT=DIR the pictures come back: STATE-BPP.png (renderer), STATE-BPP-fb.png (read back).
# Run alone (builds PanelProbe on the host if needed, then boots a guest): Tests/VMRig/panel-vfb.sh
VM_TEST_TIMEOUT=300

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    # Host side: build the probe (release: a debug build compares 300k pixels slowly under TCG).
    set -euo pipefail
    root="$(cd "$(dirname "$0")/../.." && pwd)"
    if ! command -v swift >/dev/null 2>&1; then
        echo "skipped: no swift on this host"
        exit 77
    fi
    (cd "$root" && swift build -c release --product PanelProbe >/dev/null) || { echo "PanelProbe does not build" >&2; exit 1; }
    export SWIFTWING_PANEL_PROBE="$root/.build/release/PanelProbe"
    # SWIFTWING_PANEL_OUT=DIR brings the pictures back (run.sh --out); testlib does not pass --out.
    if [ -n "${SWIFTWING_PANEL_OUT:-}" ]; then
        mkdir -p "$SWIFTWING_PANEL_OUT"
        exec "$root/scripts/vm/run.sh" --timeout "$VM_TEST_TIMEOUT" --out "$SWIFTWING_PANEL_OUT" -- "$root/Tests/VMRig/panel-vfb.sh"
    fi
fi
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

probe="${SWIFTWING_PANEL_PROBE:?}"
fb=/sys/class/graphics/fb0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
out="${SWIFTWING_VM_OUT:-$tmp}"

# check_panel BPP NAME — draw each state, read /dev/fb0 back, compare with the renderer's PNG
check_panel() {
    local bpp="$1" name="$2" stride state line
    stride="$(cat "$fb/stride")"
    line="$("$probe" show idle --device /dev/fb0 2>&1 | head -1)"
    vm_expect "[$bpp bpp] PanelProbe reads the mode" "$line" "/dev/fb0: Virtual FB, 640x480 $name, line_length $stride"
    for state in working rate-limited export; do
        vm_check "[$bpp bpp] $state drawn into /dev/fb0 (damage after idle)" \
            "$probe" show "$state" --device /dev/fb0 --png "$out/$state-$bpp.png"
        dd if=/dev/fb0 of="$tmp/fb.raw" bs="$stride" count=480 status=none
        result="$("$probe" compare "$tmp/fb.raw" "$out/$state-$bpp.png" --device /dev/fb0 --readback "$out/$state-$bpp-fb.png" 2>&1)"
        vm_expect "[$bpp bpp] $state: framebuffer equals the PNG renderer's picture" "$?" 0
        vm_note "[$bpp bpp] $state: ${result%%$'\n'*}"
    done
}

unbind_fbcon() {
    local c
    for c in /sys/class/vtconsole/vtcon*; do
        grep -q 'frame buffer' "$c/name" 2>/dev/null && echo 0 >"$c/bind"
    done
    return 0
}

vm_expect "vfb at boot is 16 bpp" "$(cat "$fb/bits_per_pixel")" 16
check_panel 16 BGR565

# A line_length longer than the visible row: a virtual width of 704 pixels (FBIOPUT_VSCREENINFO).
# The padding is filled with 0xAB first; drawing must leave it exactly so.
stride="$("$probe" set-virtual-width 704 --device /dev/fb0)"
vm_expect "[16 bpp, virtual 704] line_length" "$stride" 1408
vm_expect "[16 bpp, virtual 704] sysfs stride" "$(cat "$fb/stride")" 1408
head -c $((480 * 1408)) /dev/zero | tr '\0' '\253' >"$tmp/pattern"
dd if="$tmp/pattern" of=/dev/fb0 bs=1408 count=480 status=none
vm_check "[16 bpp, virtual 704] working drawn" "$probe" show working --device /dev/fb0 --png "$out/working-16-padded.png"
dd if=/dev/fb0 of="$tmp/fb.raw" bs=1408 count=480 status=none
result="$("$probe" compare "$tmp/fb.raw" "$out/working-16-padded.png" --device /dev/fb0 --padding-byte ab 2>&1)"
vm_expect "[16 bpp, virtual 704] equals the picture, padding untouched" "$?" 0
vm_note "[16 bpp, virtual 704] ${result//$'\n'/; }"

unbind_fbcon
vm_check "rmmod vfb" rmmod vfb
vm_check "modprobe vfb at 640x480-32" modprobe vfb vfb_enable=1 videomemorysize=4194304 mode_option=640x480-32
unbind_fbcon
vm_expect "vfb reloaded at 32 bpp" "$(cat "$fb/bits_per_pixel")" 32
check_panel 32 XBGR8888

vm_finish
