#!/usr/bin/env bash
# vfb (/dev/fb0) on a real kernel: RGB565 as loaded at boot (640x480-16), then reloaded at
# 640x480-32 (XRGB8888); for each, the geometry in sysfs and a pattern written and read back.
# Run alone (boots a guest): Tests/VMRig/framebuffer-vfb.sh
VM_TEST_TIMEOUT=120
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

fb=/sys/class/graphics/fb0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# check_fb BPP — geometry and a write/read-back of yres * stride bytes
check_fb() {
    local bpp="$1" stride=$((640 * $1 / 8)) size
    size=$((480 * stride))
    vm_check "[$bpp bpp] /dev/fb0 is a character device" test -c /dev/fb0
    vm_expect "[$bpp bpp] name" "$(cat "$fb/name" 2>/dev/null)" "Virtual FB"
    vm_expect "[$bpp bpp] bits_per_pixel" "$(cat "$fb/bits_per_pixel" 2>/dev/null)" "$bpp"
    vm_expect "[$bpp bpp] virtual_size" "$(cat "$fb/virtual_size" 2>/dev/null)" "640,480"
    vm_expect "[$bpp bpp] stride" "$(cat "$fb/stride" 2>/dev/null)" "$stride"
    # A pattern that is not the same from row to row: random bytes.
    head -c "$size" /dev/urandom >"$tmp/pattern"
    vm_check "[$bpp bpp] write $size bytes to /dev/fb0" dd if="$tmp/pattern" of=/dev/fb0 bs="$stride" count=480 status=none
    dd if=/dev/fb0 of="$tmp/readback" bs="$stride" count=480 status=none
    vm_check "[$bpp bpp] read back what was written" cmp "$tmp/pattern" "$tmp/readback"
}

check_fb 16

# Reload vfb at 32 bpp: it needs more than the 1 MiB default video memory (640*480*4 = 1.2 MB).
# The rig unbinds the framebuffer console at boot (it would hold vfb and draw a cursor into fb0);
# do the same after the reload.
unbind_fbcon() {
    local c
    for c in /sys/class/vtconsole/vtcon*; do
        grep -q 'frame buffer' "$c/name" 2>/dev/null && echo 0 >"$c/bind"
    done
    return 0
}
unbind_fbcon
vm_check "rmmod vfb" rmmod vfb
vm_check "modprobe vfb at 640x480-32" \
    modprobe vfb vfb_enable=1 videomemorysize=4194304 mode_option=640x480-32
unbind_fbcon
check_fb 32

vm_finish
