#!/usr/bin/env bash
# Run every guest test (Tests/VMRig/*.sh), each in its own boot, and print one line per test and
# a final line "N passed, M failed" (", K skipped" when some were skipped).
#
#   scripts/vm/test-all.sh [-v] [NAME_PART...]     # e.g. scripts/vm/test-all.sh camera
#
# Exit status: 0 all passed (skips allowed alongside passes), 1 any test failed,
# 77 nothing failed and nothing passed because QEMU cannot run here (all skipped).
#
# Why one boot per test: a boot costs ~5-8 s under TCG, and in exchange every test starts from
# the same kernel state (modules at their boot parameters, vfb in its boot mode, an empty
# tmpfs), a test that hangs or oopses the kernel cannot take the others down with it, and each
# test can be run alone exactly as test-all runs it (Tests/VMRig/NAME.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/lib.sh"

verbose=0
filters=()
for a in "$@"; do
    case "$a" in -v|--verbose) verbose=1 ;; -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; *) filters+=("$a") ;; esac
done

cd "$repo"
tests=()
for t in Tests/VMRig/*.sh; do
    [ -f "$t" ] || continue
    if [ "${#filters[@]}" -gt 0 ]; then
        match=0
        for f in "${filters[@]}"; do case "$t" in *"$f"*) match=1 ;; esac; done
        [ "$match" = 1 ] || continue
    fi
    tests+=("$t")
done
[ "${#tests[@]}" -gt 0 ] || vm_die "no tests matched in Tests/VMRig/" 2

passed=0 failed=0 skipped=0
cannot_run=""
logdir="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-vmtests.XXXXXX")"
trap 'rm -rf "$logdir"' EXIT

# Fetch/build once up front so that their time is not charged to the first test.
t0=$(vm_now)
if kdir="$("$here/fetch-kernel.sh")" && "$here/build-initramfs.sh" "$kdir" >/dev/null; then
    printf '%-28s %-16s %6s s\n' "(kernel + initramfs)" ready "$(vm_since "$t0")"
else
    cannot_run="could not install the host packages or fetch the kernel package"
fi
# gpio-sim too, when a test asks for it (its failure only makes those tests skip)
if [ -z "$cannot_run" ] && grep -l -- '--gpio-sim' "${tests[@]}" >/dev/null 2>&1; then
    t0=$(vm_now)
    if "$here/build-gpio-sim.sh" "$kdir" >/dev/null 2>"$logdir/gpio-sim.log"; then
        printf '%-28s %-16s %6s s\n' "(gpio-sim modules)" ready "$(vm_since "$t0")"
    else
        printf '%-28s %-16s %6s s  (the --gpio-sim tests will skip)\n' "(gpio-sim modules)" unavailable "$(vm_since "$t0")"
        sed 's/^/    | /' "$logdir/gpio-sim.log"
    fi
fi

for t in "${tests[@]}"; do
    name="$(basename "$t" .sh)"
    log="$logdir/$name.log"
    if [ -n "$cannot_run" ]; then
        skipped=$((skipped + 1))
        printf '%-28s %-16s (QEMU cannot run here: %s)\n' "$name" SKIP "$cannot_run"
        continue
    fi
    t0=$(vm_now)
    rc=0
    bash "$t" >"$log" 2>&1 || rc=$?
    secs="$(vm_since "$t0")"
    timing="$(sed -n 's/^\[vm\] \(kvm\|tcg\): .*boot \([0-9.]*\) s.*command \([0-9.]*\) s.*/\1, boot \2 s, test \3 s/p' "$log" | tail -n1)"
    case "$rc" in
        0)  passed=$((passed + 1)); status=PASS ;;
        77) skipped=$((skipped + 1)); status=SKIP
            if grep -q '^\[vm\] skipped: QEMU cannot run here' "$log"; then
                cannot_run="$(sed -n 's/^\[vm\] skipped: QEMU cannot run here: //p' "$log" | head -n1)"
            fi ;;
        124) failed=$((failed + 1)); status="FAIL (timed out)" ;;
        *)  failed=$((failed + 1)); status="FAIL (exit $rc)" ;;
    esac
    printf '%-28s %-16s %6s s%s\n' "$name" "$status" "$secs" "${timing:+  ($timing)}"
    if [ "$rc" != 0 ] && [ "$rc" != 77 ] || [ "$verbose" = 1 ]; then
        sed 's/^/    | /' "$log"
    else
        # notes the tests print ("# ...") and skip reasons, without the ok lines
        grep -E '^# |skipped' "$log" | grep -v '^# [0-9]* passed' | sed 's/^/    /' || true
    fi
done

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ] || exit 1
if [ "$passed" -eq 0 ] && [ "$skipped" -gt 0 ]; then exit 77; fi
exit 0
