#!/usr/bin/env bash
# Checks of the rig itself (not of the device code): exit statuses, output, cwd and timeouts.
# Six short boots (~60 s under TCG). Not part of test-all.sh; run after changing the rig.
#
#   scripts/vm/selftest.sh        # exit 0 when all checks pass, 1 otherwise, 77 if QEMU cannot run
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
run="$here/run.sh"
failed=0
check() { if [ "$2" = "$3" ]; then echo "ok - $1 ($2)"; else echo "not ok - $1: got '$2', expected '$3'"; failed=1; fi; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
mkdir sub && cd sub || exit 1

SWIFTWING_VM_QUIET=1 "$run" -- sh -c 'pwd; echo to-stderr >&2; echo "$SWIFTWING_VM_GUEST"; printf "%s|" "$@"; exit 42' arg0 "a b" "c'd" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 77 ] && { echo "skipped: QEMU cannot run here"; exit 77; }
check "the command's exit status comes back" "$rc" 42
check "cwd is the host's" "$(sed -n 1p "$tmp/out")" "$tmp/sub"
check "SWIFTWING_VM_GUEST=1 in the guest" "$(sed -n 2p "$tmp/out")" 1
check "arguments arrive intact" "$(sed -n 3p "$tmp/out")" "a b|c'd|"
check "stderr goes to stderr" "$(cat "$tmp/err")" "to-stderr"

SWIFTWING_VM_QUIET=1 "$run" --out "$tmp/o" -- sh -c 'echo data >"$SWIFTWING_VM_OUT/f"; touch /etc/guest-only; /no/such/command' \
    >/dev/null 2>"$tmp/err"
rc=$?
check "a missing command exits 127" "$rc" 127
[ "$rc" = 127 ] || sed 's/^/#   /' "$tmp/err"
check "--out brings files back" "$(cat "$tmp/o/f" 2>/dev/null)" data
check "guest writes do not reach the host" "$([ -e /etc/guest-only ] && echo leaked || echo absent)" absent

start=$(date +%s)
"$run" --timeout 15 -- sleep 600 >/dev/null 2>"$tmp/err"
rc=$?
check "a hung command times out with 124" "$rc" 124
check "the timeout is enforced" "$([ $(( $(date +%s) - start )) -lt 40 ] && echo yes || echo no)" yes
check "the timeout is reported" "$(grep -c 'timed out after 15 s' "$tmp/err")" 1

# the power-cut and hook contract (run.sh --cut-*, --hook)
"$run" --cut-after 1 -- sh -c 'echo started; sleep 600' >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a power cut while the command runs exits 0" "$rc" 0
check "the cut is reported" "$(grep -c '^\[vm\] power cut (QMP quit)' "$tmp/err")" 1
"$run" --cut-on 'never-printed' -- true >/dev/null 2>"$tmp/err"
rc=$?
check "a command that ends before the cut fails (1)" "$rc" 1
check "and says so" "$(grep -c 'before the power cut (marker /never-printed/ never seen)' "$tmp/err")" 1
printf '#!/bin/sh\n[ -S "$SWIFTWING_VM_QMP" ] || exit 3\necho hook-ran; exit 5\n' >"$tmp/hook"; chmod +x "$tmp/hook"
SWIFTWING_VM_QUIET=1 "$run" --hook "$tmp/hook" -- true >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a failing --hook fails the run (1)" "$rc" 1
check "the hook ran with the QMP socket, its stdout is ours" "$(cat "$tmp/out")" hook-ran
check "its status is reported" "$(grep -c 'hook program exited with status 5' "$tmp/err")" 1

exit "$failed"
