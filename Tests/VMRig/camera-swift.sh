#!/usr/bin/env bash
# The Camera module's own hardware tests (Tests/CameraTests/V4L2HardwareTests.swift) against vivid:
# negotiation, mmap streaming through libv4l2 and plain libc, capture(after:) never returning a
# frame older than the press, frames shrunk on the camera thread straight out of the driver buffer,
# error frames dropped, stall → reopen, and vivid's "Disconnect" (an unplug) → reported, then
# recovered. Needs `swift build --build-tests` on the host first.
# Run alone (boots a guest): Tests/VMRig/camera-swift.sh
VM_TEST_TIMEOUT=300
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

tests=.build/debug/SwiftWingPackageTests.xctest
vm_require_built "$tests" 'swift build --build-tests'
out="$(SWIFTWING_TEST_V4L2_DEVICE=/dev/video0 SWIFTWING_TEST_V4L2_DISCONNECT=1 \
    "$tests" --testing-library swift-testing --filter V4L2HardwareTests 2>&1)"; rc=$?
printf '%s\n' "$out" | grep -E '✔|✘|recorded an issue|Test .* skipped' | sed 's/^/#   /'
vm_expect "V4L2HardwareTests exit status" "$rc" 0
vm_check "no hardware test was skipped" bash -c '! grep -qE "Test .* skipped" <<<"$1"' _ "$out"
vm_check "capture on the device passed (libv4l2 and libc)" grep -q "streamsAndCapturesTheFirstFrameAfterThePress.* passed" <<<"$out"
vm_check "frames shrunk straight out of the driver buffer passed" \
    grep -q "deliversFramesShrunkOutOfTheDriverBuffer() passed" <<<"$out"
vm_check "the unplug test ran and passed" grep -q "anUnplugFailsPendingCapturesAndReopens() passed" <<<"$out"
vm_finish
