#!/usr/bin/env bash
# The kill storm at scale: KillStormTests (Tests/SwiftWingIntegrationTests) with KILLS SIGKILLs
# (default 200) instead of the 30 of `make test`, then its figures: kills, presses, scans, jobs,
# time and where the kills landed. SWIFTWING_KILL_SEED=N replays the random choices of a run.
# Usage: scripts/kill-storm.sh [KILLS]
set -uo pipefail
cd "$(dirname "$0")/.." || exit
export PATH="/opt/swift/usr/bin:$PATH"
swift=${SWIFT:-swift}
log="$(mktemp "${TMPDIR:-/tmp}/swiftwing-kill-storm.XXXXXX")"
trap 'rm -f "$log"' EXIT
"$swift" build --build-tests || exit 1
SWIFTWING_KILLS="${1:-200}" "$swift" test --skip-build --filter KillStormTests 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
echo
grep -E '^kill storm' "$log"
exit "$rc"
