#!/usr/bin/env bash
# The shutter and the buzzer on a real GPIO character device (gpio-sim, labelled like a Pi 4's
# header chip; SHUTTER = line 17, BUZZER = line 27), through libgpiod 1.6:
#  1. ControlsTests' kernel suites in the guest: chip by label and name, line by name and offset,
#     busy/missing lines as typed errors, CLOCK_MONOTONIC edge stamps, a clean, a bouncy and a held
#     press, 20 quick presses, a prompt stop, the buzzer's level read back from sysfs, press→buzzer
#     latency on the real lines.
#  2. The real daemon (`swiftwing run`, synthetic camera) with [shutter] and [buzzer] on the chip:
#     a clean press is one scan; bouncy, held and 20 quick presses are one press each (accepted +
#     refused = presses); a long press sounds its pattern on BUZZER (read back from sysfs); the
#     latency histogram is in `swiftwing status --json`; run as a user without access to the chip,
#     the daemon names the chip, the line and the group `gpio` and runs on.
# Needs the host build first: swift build --build-tests (the test bundle and swiftwing).
# Run alone (boots a guest with gpio-sim): Tests/VMRig/shutter-gpio.sh
VM_TEST_TIMEOUT=300
VM_TEST_ARGS=(--gpio-sim)
if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    for f in .build/debug/swiftwing .build/debug/SwiftWingPackageTests.xctest; do
        [ -x "$f" ] || { echo "skipped: no $f (build first: swift build --build-tests)"; exit 77; }
    done
fi
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

ctl=scripts/vm/gpio-sim-ctl.sh
[ -d /sys/kernel/config/gpio-sim/swiftwing ] || { echo "skipped: no gpio-sim chip (this rig has no --gpio-sim)"; exit 77; }
label="$($ctl label)"
chip="$($ctl chip)"
vm_note "gpio-sim chip ${chip#/dev/} [$label]; SHUTTER $($ctl offset SHUTTER), BUZZER $($ctl offset BUZZER)"

# 1. The Swift kernel tests, on this chip.
export SWIFTWING_GPIOSIM_LABEL="$label" SWIFTWING_GPIOSIM_CHIP="${chip#/dev/}"
export SWIFTWING_GPIOSIM_SHUTTER="$($ctl sysfs SHUTTER)" SWIFTWING_GPIOSIM_BUZZER="$($ctl sysfs BUZZER)"
out="$(.build/debug/SwiftWingPackageTests.xctest --testing-library swift-testing --filter 'KernelGPIOTests|GPIOErrorTests' 2>&1)"; rc=$?
printf '%s\n' "$out" | grep -E '✘|passed|failed|gpio-sim press|error|Expectation' | sed 's/^/#   /' | head -60
vm_expect "ControlsTests KernelGPIOTests on gpio-sim pass" "$rc" 0
vm_check "the kernel suite ran (not skipped)" grep -q 'Suite KernelGPIOTests passed' <<<"$out"

# 2. The daemon.
state=/tmp/sw-gpio
mkdir -p "$state"
cat >/tmp/sw-gpio.toml <<TOML
[daemon]
state_directory = "$state"
control_socket = "/tmp/sw-gpio.sock"
min_free_megabytes = 0
[camera]
device = "synthetic"
width = 640
height = 480
capture_timeout_seconds = 10.0
[imaging]
queue_depth = 64
[shutter]
gpio_chip = "$label"
gpio_line = "SHUTTER"
keys = "none"
long_press_ms = 1000
[buzzer]
gpio_line = "BUZZER"
TOML
sw() { .build/debug/swiftwing "$@" --config /tmp/sw-gpio.toml; }
field() { sed -n "s/.*\"$1\" : \\([0-9]*\\).*/\\1/p" | head -1; }
sw run >/tmp/sw-gpio.log 2>&1 &
daemon=$!
for _ in $(seq 100); do [ -S /tmp/sw-gpio.sock ] && break; sleep 0.1; done
vm_check "the daemon serves (control socket up)" test -S /tmp/sw-gpio.sock
vm_check "the daemon requested SHUTTER and BUZZER" sh -c "gpioinfo ${chip#/dev/} | grep -E 'line +(17|27):.*\"swiftwing\"' | wc -l | grep -qx 2"

presses() { s="$(sw status --json)"; a="$(field pressesAccepted <<<"$s")"; r="$(field pressesRefused <<<"$s")"; echo $(( ${a:-0} + ${r:-0} )); }
# wait_presses N — until accepted + refused = N (processing under TCG takes a while)
wait_presses() { for _ in $(seq 300); do [ "$(presses)" -ge "$1" ] && break; sleep 0.2; done; presses; }

$ctl click SHUTTER 0.1
vm_expect "a clean press is one press" "$(wait_presses 1)" 1
queued="$(sw queue --json | grep -c '"id"')"
vm_expect "… and one scan in the queue" "$queued" 1

$ctl bounce SHUTTER down; sleep 0.2; $ctl bounce SHUTTER up; sleep 0.3
vm_expect "a bouncy press and release is one press" "$(wait_presses 2)" 2

# A held press: one press, and the long-press pattern (200 ms on, 100 off, 200 on) on BUZZER.
$ctl press SHUTTER
samples="$($ctl sample BUZZER 1.8 0.005)"
$ctl release SHUTTER; sleep 0.3
vm_expect "a held press (1.8 s) is one press, no repeats" "$(wait_presses 3)" 3
vm_note "BUZZER while held: $(tr '\n' ' ' <<<"$samples")"
ons="$(grep -c ' 1$' <<<"$samples")"
vm_check "BUZZER sounded the click and the long-press pattern (≥ 2 on-phases seen; saw $ons)" test "$ons" -ge 2
vm_expect "BUZZER is silent afterwards" "$($ctl value BUZZER)" 0

for _ in $(seq 20); do $ctl seq SHUTTER down 0.04 up 0.06; done
vm_expect "20 quick presses are 20 presses" "$(wait_presses 23)" 23

status="$(sw status --json)"
vm_note "$(tr -d '\n' <<<"$status" | grep -o '"shutterLatency".*' | cut -c1-300)"
vm_expect "the latency histogram counts every GPIO press" "$(sed -n '/shutterLatency/,/}/p' <<<"$status" | grep -o '"count" : [0-9]*' | tail -1 | grep -o '[0-9]*$')" 23
vm_check "status lists the GPIO shutter input" grep -q "GPIO line SHUTTER of $label" <<<"$status"

kill -TERM "$daemon"; wait "$daemon"; rc=$?
vm_expect "the daemon stops cleanly on SIGTERM" "$rc" 0
vm_check "… and gives the lines back" sh -c "! gpioinfo ${chip#/dev/} | grep -q '\"swiftwing\"'"

# 3. Without permission on the chip: the daemon says what to do and runs on.
chmod 0600 "$chip"
rm -rf "$state" /tmp/sw-gpio.sock; mkdir -p "$state"; chown nobody "$state"; chmod 0777 /tmp
setpriv --reuid=nobody --regid=nogroup --clear-groups .build/debug/swiftwing run --config /tmp/sw-gpio.toml >/tmp/sw-gpio-nobody.log 2>&1 &
daemon=$!
for _ in $(seq 100); do [ -S /tmp/sw-gpio.sock ] && break; sleep 0.1; done
vm_check "without access to the chip the daemon still serves" test -S /tmp/sw-gpio.sock
vm_check "… and the log names the chip, the line and the group gpio" grep -q "no permission to open GPIO chip $label.*line SHUTTER.*group \`gpio\`" /tmp/sw-gpio-nobody.log
grep -m2 -i 'gpio' /tmp/sw-gpio-nobody.log | sed 's/^/#   /'
kill -TERM "$daemon"; wait "$daemon"
vm_finish
