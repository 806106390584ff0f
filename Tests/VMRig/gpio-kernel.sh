#!/usr/bin/env bash
# libgpiod 1.6 on a real GPIO character device (gpio-sim, labelled like a Pi 4's header chip;
# SHUTTER = line 17, BUZZER = line 27): ControlsTests' kernel suites in the guest — chip by label
# and name, line by name and offset, busy/missing lines as typed errors, CLOCK_MONOTONIC edge
# stamps, a clean, a bouncy and a held press, 20 quick presses, a prompt stop, the buzzer's level
# read back from sysfs, press→buzzer latency on the real lines. (The daemon on the same chip:
# Tests/VMRig/shutter-gpio.sh.)
# Needs the host build first: swift build --build-tests. Run alone: Tests/VMRig/gpio-kernel.sh
VM_TEST_TIMEOUT=600
VM_TEST_ARGS=(--gpio-sim)
. "$(dirname "$0")/../../scripts/vm/testlib.sh"

ctl=scripts/vm/gpio-sim-ctl.sh
tests=.build/debug/SwiftWingPackageTests.xctest
vm_require_built "$tests" 'swift build --build-tests'
if [ ! -d /sys/kernel/config/gpio-sim/swiftwing ]; then
    vm_not_ok "no gpio-sim chip in the guest (run.sh --gpio-sim did not set one up)"
    vm_finish
fi
label="$($ctl label)"
chip="$($ctl chip)"
vm_note "gpio-sim chip ${chip#/dev/} [$label]; SHUTTER $($ctl offset SHUTTER), BUZZER $($ctl offset BUZZER)"
export SWIFTWING_GPIOSIM_LABEL="$label" SWIFTWING_GPIOSIM_CHIP="${chip#/dev/}"
SWIFTWING_GPIOSIM_SHUTTER="$($ctl sysfs SHUTTER)"; SWIFTWING_GPIOSIM_BUZZER="$($ctl sysfs BUZZER)"
export SWIFTWING_GPIOSIM_SHUTTER SWIFTWING_GPIOSIM_BUZZER
out="$("$tests" --testing-library swift-testing --filter 'KernelGPIOTests|GPIOErrorTests' 2>&1)"; rc=$?
printf '%s\n' "$out" | grep -E '✘|passed|failed|gpio-sim press|error|Expectation' | sed 's/^/#   /' | head -60
vm_expect "ControlsTests KernelGPIOTests on gpio-sim pass" "$rc" 0
vm_check "the kernel suite ran (not skipped)" grep -q 'Suite KernelGPIOTests passed' <<<"$out"
vm_finish
