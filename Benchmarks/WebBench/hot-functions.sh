#!/usr/bin/env bash
# Regenerates Linking/web-hot-functions.order: the functions swiftwing-web runs, in the order it first runs them,
# which its release link (Package.swift, webResidentCodeLinkerFlags) places together at the front of .text, so the
# code it keeps resident is a few contiguous megabytes rather than 64 KiB here and there over 24 MB.
#
# It runs web_cost.py's scenario (10,000 books; pairing, the library, searches, a book, the Now page and its live
# stream) with swiftwing-web under valgrind's callgrind, and keeps every function callgrind saw executed in the
# binary. Re-run it after large changes; an out-of-date list still links (names that no longer exist are ignored),
# it only orders less well.
#
# Usage: Benchmarks/WebBench/hot-functions.sh BUILD_DIR [swiftwing-web binary]
# BUILD_DIR holds swiftwing and ExportBench (web_cost.py's helpers). Needs valgrind and a release build:
#   swift build -c release --static-swift-stdlib --product swiftwing-web
# SwiftPM does not see the list as an input of the link: after regenerating it, remove
# .build/release/swiftwing-web and build again to relink with the new order.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:?usage: $0 BUILD_DIR [swiftwing-web binary]}")
bin=$(realpath "${2:-.build/release/swiftwing-web}")
command -v valgrind >/dev/null || { echo "valgrind is missing: apt install valgrind" >&2; exit 1; }
work=$(mktemp -d /tmp/swiftwing-web-hot.XXXXXX)
trap 'rm -rf "$work"' EXIT

# valgrind 3.19 (bookworm) cannot read DWARF 5; the symbol table is all it needs.
objcopy --strip-debug "$bin" "$work/swiftwing-web"
cat > "$work/wrapper" <<WRAPPER
#!/usr/bin/env bash
exec valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no --compress-pos=no \\
  --callgrind-out-file="$work/callgrind.%p" "$work/swiftwing-web" "\$@"
WRAPPER
chmod +x "$work/wrapper"
python3 Benchmarks/WebBench/web_cost.py "$build" --runs 3 --web "$work/wrapper" >"$work/bench.log" 2>&1 ||
  { cat "$work/bench.log" >&2; exit 1; }

python3 scripts/order-from-callgrind.py "$work" Linking/web-hot-functions.order swiftwing-web
