#!/usr/bin/env bash
# Regenerates Linking/hot-functions.order: the functions the daemon runs, in the order it first runs them,
# which the release link (Package.swift, residentCodeLinkerFlags) places together at the front of .text so
# the daemon's resident code is a few contiguous megabytes instead of 64 KiB here and there over 20 MB.
#
# It runs the memory benchmark's scenario (scripts/bench-memory.sh: start-up, N presses, uploads, three
# progress streams, a restart that reconciles and resumes them) with the daemon under valgrind's callgrind,
# and keeps every function callgrind saw executed in the swiftwing binary. Re-run it after large changes;
# an out-of-date list still links (names that no longer exist are ignored), it only orders less well.
#
# Usage: scripts/hot-functions.sh [N presses, default 30] [swiftwing binary] [talaria-reference binary]
# Needs valgrind (apt install valgrind) and a release build:
#   swift build -c release --static-swift-stdlib --product swiftwing
#   swift build -c release --product talaria-reference
# SwiftPM does not see the list as an input of the link: after regenerating it, remove
# .build/release/swiftwing and build again to relink with the new order.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-30}
bin=$(realpath "${2:-.build/release/swiftwing}")
backend_bin=$(realpath "${3:-$(dirname "$bin")/talaria-reference}")
command -v valgrind >/dev/null || { echo "valgrind is missing: apt install valgrind" >&2; exit 1; }
work=$(mktemp -d /tmp/swiftwing-hot.XXXXXX)
trap 'rm -rf "$work"' EXIT

# valgrind 3.19 (bookworm) cannot read DWARF 5; the symbol table is all it needs.
objcopy --strip-debug "$bin" "$work/swiftwing"
cat > "$work/wrapper" <<EOF
#!/usr/bin/env bash
if [ "\$1" = run ]; then
  exec valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no --compress-pos=no \\
    --callgrind-out-file="$work/callgrind.%p" "$work/swiftwing" "\$@"
fi
exec "$work/swiftwing" "\$@"
EOF
chmod +x "$work/wrapper"
scripts/bench-memory.sh "$count" "$work/wrapper" "$backend_bin" >"$work/bench.log" 2>&1 ||
  { cat "$work/bench.log" >&2; exit 1; }

python3 scripts/order-from-callgrind.py "$work" Linking/hot-functions.order swiftwing
