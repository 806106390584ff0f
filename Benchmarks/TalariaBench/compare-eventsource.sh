#!/bin/sh
# The SSE parser comparison: Talaria's SSEParser against the parser of
# mattt/EventSource 1.1.1, in one process, on the same bytes. Prints the figures of
# Benchmarks/README.md ("## SSE parser").
#
# mattt/EventSource 1.1.1 does not compile on Linux (it calls URLSession.bytes(for:delegate:), which
# FoundationNetworking lacks), so it cannot be a SwiftPM dependency of this package. This script
# fetches its tagged source with git (nothing of it is committed), and compiles, in one optimised
# whole-module build: its unmodified EventSource.swift, EventSourceLinuxShim.swift (a stand-in for
# that one missing method, never called), Talaria's SSEParser.swift and this benchmark's main.swift.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work="$root/.build-ssebench"
swiftc=${SWIFTC:-swiftc}
mkdir -p "$work"
if [ ! -f "$work/EventSource-1.1.1.swift" ]; then
    rm -rf "$work/EventSource"
    git -c advice.detachedHead=false clone --quiet --branch 1.1.1 https://github.com/mattt/EventSource.git "$work/EventSource"
    cp "$work/EventSource/Sources/EventSource/EventSource.swift" "$work/EventSource-1.1.1.swift"
fi
"$swiftc" -O -wmo -swift-version 6 -module-name SSEBench -D SSE_COMPARISON \
    "$here/main.swift" "$root/Sources/Talaria/SSEParser.swift" \
    "$work/EventSource-1.1.1.swift" "$here/EventSourceLinuxShim.swift" \
    -o "$work/sse-compare"
exec "$work/sse-compare" "$@"
