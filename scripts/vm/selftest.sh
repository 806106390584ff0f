#!/usr/bin/env bash
# Checks of the rig itself (not of the device code): exit statuses, output, cwd and timeouts.
# Three short boots (~20-30 s under TCG). Not part of test-all.sh; run after changing the rig.
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
    >/dev/null 2>&1
rc=$?
check "a missing command exits 127" "$rc" 127
check "--out brings files back" "$(cat "$tmp/o/f" 2>/dev/null)" data
check "guest writes do not reach the host" "$([ -e /etc/guest-only ] && echo leaked || echo absent)" absent

start=$(date +%s)
"$run" --timeout 15 -- sleep 600 >/dev/null 2>"$tmp/err"
rc=$?
check "a hung command times out with 124" "$rc" 124
check "the timeout is enforced" "$([ $(( $(date +%s) - start )) -lt 40 ] && echo yes || echo no)" yes
check "the timeout is reported" "$(grep -c 'timed out after 15 s' "$tmp/err")" 1

exit "$failed"
