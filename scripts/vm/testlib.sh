# shellcheck shell=bash
# Helpers for guest tests (Tests/VMRig/*.sh). Source it first thing:
#
#   VM_TEST_TIMEOUT=90   # optional, seconds (run.sh --timeout), default 120
#   VM_TEST_ARGS=(--gpio-sim)   # optional, more run.sh options (e.g. --gpio-sim, --param ...)
#   . "$(dirname "$0")/../../scripts/vm/testlib.sh"
#
# On the host, sourcing re-executes the test inside a fresh guest through run.sh (so a test can
# be run on its own: `Tests/VMRig/camera-vivid.sh`); in the guest (SWIFTWING_VM_GUEST=1) it
# defines TAP-style checks. End the test with `vm_finish`: exit 1 if any check failed.

if [ "${SWIFTWING_VM_GUEST:-0}" != 1 ]; then
    _vm_self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
    _vm_run="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/run.sh"
    exec "$_vm_run" --timeout "${VM_TEST_TIMEOUT:-120}" ${VM_TEST_ARGS[@]+"${VM_TEST_ARGS[@]}"} -- "$_vm_self" "$@"
fi

set -uo pipefail
vm_passed=0
vm_failed=0
vm_n=0

vm_ok() { vm_n=$((vm_n + 1)); vm_passed=$((vm_passed + 1)); echo "ok $vm_n - $*"; }
vm_not_ok() { vm_n=$((vm_n + 1)); vm_failed=$((vm_failed + 1)); echo "not ok $vm_n - $*"; }
vm_note() { echo "# $*"; }

# vm_check DESCRIPTION COMMAND... — passes when COMMAND succeeds (its output is shown on failure)
vm_check() {
    local desc="$1" out; shift
    if out="$("$@" 2>&1)"; then vm_ok "$desc"; else vm_not_ok "$desc"; printf '%s\n' "$out" | sed 's/^/#   /'; fi
}

# vm_expect DESCRIPTION ACTUAL EXPECTED
vm_expect() {
    if [ "$2" = "$3" ]; then vm_ok "$1 ($2)"; else vm_not_ok "$1: got '$2', expected '$3'"; fi
}

# vm_wait_for SECONDS COMMAND... — runs COMMAND every 0.2 s until it succeeds or SECONDS have passed by
# the clock (a check that starts the debug binary can take seconds under TCG)
vm_wait_for() {
    local end=$((SECONDS + $1)); shift
    while :; do
        "$@" && return 0
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.2
    done
}

# vm_require_built PATH BUILD_COMMAND — ends the test (not ok) when PATH, built on the host, is missing
vm_require_built() {
    if [ ! -x "$1" ]; then
        vm_not_ok "$1 is missing: run '$2' on the host first"
        vm_finish
    fi
}

vm_finish() {
    echo "1..$vm_n"
    echo "# $vm_passed passed, $vm_failed failed"
    [ "$vm_failed" -eq 0 ]
    exit $?
}
