#!/usr/bin/env bash
# The key shutter on real evdev devices: a virtual key device made through /dev/uinput after the
# shutter started is picked up (inotify on /dev/input), its KEY_CAMERA press is one press stamped
# on CLOCK_MONOTONIC (EVIOCSCLOCKID), autorepeat is ignored, a held key is one long press, other
# keys are ignored, and its removal is dropped quietly; with shutter.key_devices only the device
# named presses, and taps closer than 150 ms are one press (ControlsTests.KernelKeyTests).
# Needs the host build first: swift build --build-tests.
# Run alone (boots a guest): Tests/VMRig/shutter-keys.sh
VM_TEST_TIMEOUT=180
if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    [ -x .build/debug/SwiftWingPackageTests.xctest ] || { echo "skipped: no test bundle (build first: swift build --build-tests)"; exit 77; }
fi
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

vm_check "modprobe evdev uinput" modprobe -a evdev uinput
vm_check "/dev/uinput exists" test -c /dev/uinput
out="$(.build/debug/SwiftWingPackageTests.xctest --testing-library swift-testing --filter 'KernelKeyTests|KeyShutterDirectoryTests' 2>&1)"; rc=$?
printf '%s\n' "$out" | grep -E '✘|passed|failed|Expectation' | sed 's/^/#   /' | head -40
vm_expect "KernelKeyTests pass on a uinput device" "$rc" 0
vm_check "the kernel suite ran (not skipped)" grep -q 'Suite KernelKeyTests passed' <<<"$out"
vm_finish
