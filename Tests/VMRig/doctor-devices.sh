#!/usr/bin/env bash
# `swiftwing doctor` on real kernel devices: the GPIO lines of a gpio-sim chip labelled like a
# Raspberry Pi 4's (found by label, free, then one held by another program: a FAIL naming the holder
# and the fix), vfb's framebuffer (opens, its size), the guest's evdev nodes, and the clock.
# Needs the host build first: swift build --product swiftwing.
# Run alone (boots a guest): Tests/VMRig/doctor-devices.sh
VM_TEST_TIMEOUT=180
VM_TEST_ARGS=(--gpio-sim)
bin=.build/debug/swiftwing
if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    [ -x "$bin" ] || { echo "skipped: no $bin (build first: swift build --product swiftwing)"; exit 77; }
fi
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

modprobe evdev 2>/dev/null
work="$(mktemp -d)"
cat >"$work/swiftwing.toml" <<TOML
[panel]
output = "fb:/dev/fb0"
[shutter]
gpio_chip = "pinctrl-bcm2711"
gpio_line = "SHUTTER"
[buzzer]
gpio_line = "BUZZER"
light_line = "LIGHT"
TOML
args=(--config "$work/swiftwing.toml" --state-dir "$work/state" --control-socket "$work/control.sock"
      --camera /dev/video0)

doctor="$("$bin" doctor "${args[@]}" 2>/dev/null)"
printf '%s\n' "$doctor" | sed 's/^/#   /'
chip="$(scripts/vm/gpio-sim-ctl.sh chip)"; chip="${chip#/dev/}"
at="$chip \[pinctrl-bcm2711\] line"
vm_check "gpio: the three lines found by label and name, all free" grep -qx \
    "ok   gpio: shutter SHUTTER = $at 17 (free); buzzer BUZZER = $at 27 (free); light LIGHT = $at 22 (free)" \
    <<<"$doctor"
vm_check "framebuffer: vfb opens at its boot mode" \
    grep -q '^ok   framebuffer: /dev/fb0 "Virtual FB": 640x480, 16 bpp$' <<<"$doctor"
vm_check "clock: a date after 2024 (QEMU's RTC); synchronised or the fix" grep -Eq \
    '^(ok   clock: 20[2-9][0-9]-.*synchronised|FAIL clock: 20[2-9][0-9]-.*Fix: `sudo timedatectl set-ntp true`)' \
    <<<"$doctor"
vm_check "key devices: a line for them" grep -q '^ok   key devices: ' <<<"$doctor"
vm_note "evdev nodes: $(find /dev/input -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)"

# Another program holds the shutter line: the doctor names it and the fix.
timeout 20 gpiomon --num-events=1 "$chip" 17 >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 50); do gpioinfo "$chip" | grep -Eq 'line +17:.*\[used' && break; sleep 0.1; done
busy="$("$bin" doctor "${args[@]}" 2>/dev/null)"; rc=$?
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
printf '%s\n' "$busy" | grep '^FAIL gpio' | sed 's/^/#   /'
vm_check "a held line: FAIL naming the holder and the fix" \
    grep -q '^FAIL gpio: line SHUTTER of GPIO chip pinctrl-bcm2711 .* is busy (held by "gpiomon")\. Fix: ' <<<"$busy"
vm_expect "doctor exits 1 when a check fails" "$rc" 1
vm_finish
