#!/usr/bin/env bash
# vivid (/dev/video0) on a real kernel: identity, 1080p YU12 mmap streaming, size adjustment,
# YUYV streaming. Run alone (boots a guest): Tests/VMRig/camera-vivid.sh
VM_TEST_TIMEOUT=120
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

dev=/dev/video0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# (each v4l2-ctl start costs ~0.3 s under TCG: query once, then pick fields from the text)
# field TEXT NAME — a "Name : value" field of v4l2-ctl output (e.g. "Width/Height")
field() { printf '%s\n' "$1" | sed -n "s|^[[:space:]]*$2[[:space:]]*: *||p" | head -n1; }
# getfmt — the current capture format into $f, for fmt NAME
getfmt() { f="$(v4l2-ctl -d "$dev" --get-fmt-video)"; }
fmt() { field "$f" "$1"; }
# nonzero FILE — the file holds at least one non-zero byte
nonzero() { [ "$(tr -d '\000' <"$1" | head -c 1 | wc -c)" -eq 1 ]; }

if ! command -v v4l2-ctl >/dev/null; then
    vm_not_ok "v4l2-ctl is not installed on the host (apt-get install v4l-utils)"
    vm_finish
fi

vm_check "$dev is a character device" test -c "$dev"
vm_expect "sysfs name of video0" "$(cat /sys/class/video4linux/video0/name 2>/dev/null)" "vivid-000-vid-cap"
info="$(v4l2-ctl -d "$dev" --info)"
vm_expect "driver name" "$(field "$info" 'Driver name')" "vivid"
vm_expect "card type" "$(field "$info" 'Card type')" "vivid"
caps="$(printf '%s\n' "$info" | sed -n '/Device Caps/,/^[^[:space:]]/p')"
vm_check "device caps include Video Capture" grep -q 'Video Capture' <<<"$caps"
vm_check "device caps include Streaming" grep -q 'Streaming' <<<"$caps"
formats="$(v4l2-ctl -d "$dev" --list-formats)"
vm_check "YU12 is an offered format" grep -q "'YU12'" <<<"$formats"
vm_check "YUYV is an offered format" grep -q "'YUYV'" <<<"$formats"

# --- 1920x1080 YU12, 10 mmap frames ---------------------------------------------------------------
vm_check "set 1920x1080 YU12" v4l2-ctl -d "$dev" --set-fmt-video=width=1920,height=1080,pixelformat=YU12
getfmt
vm_expect "1080p: width/height" "$(fmt 'Width/Height')" "1920/1080"
vm_expect "1080p: pixel format" "$(fmt 'Pixel Format' | cut -d' ' -f1)" "'YU12'"
vm_expect "1080p: bytes per line" "$(fmt 'Bytes per Line')" "1920"
vm_expect "1080p: size image" "$(fmt 'Size Image')" "3110400"
t0=$(date +%s%N)
vm_check "stream 10 mmap frames" \
    v4l2-ctl -d "$dev" --stream-mmap --stream-count=10 --stream-to="$tmp/yu12.raw"
t1=$(date +%s%N)
vm_note "10 frames of 1920x1080 YU12 in $(( (t1 - t0) / 1000000 )) ms"
vm_expect "10 frames captured" "$(stat -c %s "$tmp/yu12.raw" 2>/dev/null)" "$((10 * 3110400))"
head -c 3110400 "$tmp/yu12.raw" >"$tmp/first"
tail -c 3110400 "$tmp/yu12.raw" >"$tmp/last"
vm_check "first frame is not blank" nonzero "$tmp/first"
if cmp -s "$tmp/first" "$tmp/last"; then
    vm_note "first and last frames are identical (vivid pattern does not move)"
else
    vm_note "first and last frames differ (vivid animates / prints a counter)"
fi

# --- a size vivid must adjust -------------------------------------------------------------------
vm_check "set 1000x700 YU12 (not offered)" v4l2-ctl -d "$dev" --set-fmt-video=width=1000,height=700,pixelformat=YU12
getfmt
adj="$(fmt 'Width/Height')"
vm_note "vivid adjusted 1000x700 to ${adj/\//x} (bytes per line $(fmt 'Bytes per Line'), size image $(fmt 'Size Image'))"
if [ -n "$adj" ] && [ "$adj" != "1000/700" ]; then vm_ok "1000x700 was adjusted ($adj)"; else vm_not_ok "1000x700 was not adjusted ($adj)"; fi
vm_check "the adjusted size is one vivid lists" \
    grep -q "Discrete ${adj/\//x}\$" <<<"$(v4l2-ctl -d "$dev" --list-framesizes YU12)"

# --- YUYV (packed 4:2:2: what UVC webcams deliver; libv4l2 converts it) --------------------------
vm_check "set 640x480 YUYV" v4l2-ctl -d "$dev" --set-fmt-video=width=640,height=480,pixelformat=YUYV
getfmt
vm_expect "YUYV: width/height" "$(fmt 'Width/Height')" "640/480"
vm_expect "YUYV: pixel format" "$(fmt 'Pixel Format' | cut -d' ' -f1)" "'YUYV'"
vm_expect "YUYV: bytes per line" "$(fmt 'Bytes per Line')" "1280"
vm_expect "YUYV: size image" "$(fmt 'Size Image')" "614400"
vm_check "stream 5 YUYV mmap frames" \
    v4l2-ctl -d "$dev" --stream-mmap --stream-count=5 --stream-to="$tmp/yuyv.raw"
vm_expect "5 YUYV frames captured" "$(stat -c %s "$tmp/yuyv.raw" 2>/dev/null)" "$((5 * 614400))"
head -c 614400 "$tmp/yuyv.raw" >"$tmp/yuyv1"
vm_check "first YUYV frame is not blank" nonzero "$tmp/yuyv1"

vm_finish
