#!/usr/bin/env bash
# The library in a real browser (Tests/WebBrowser/browser_test.py): Debian's chromium and chromium-driver
# (scripts/install-deps.sh test) driven by selenium, and zbarimg (zbar-tools) to read the pairing QR code off the
# panel's PNG. Selenium is pinned in Tests/WebBrowser/requirements.txt and installed into a virtual environment
# made here (.web-test-venv, kept while the requirements are unchanged).
# Needs the debug build of swiftwing, swiftwing-web and ExportBench (`swift build --build-tests` builds them).
# Prints `browser-result NAME ok|fail` per check, then `N passed, N failed`.
# Usage: scripts/web-browser-test.sh [--screenshots DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${SWIFTWING_WEB_TEST_VENV:-$root/.web-test-venv}"
requirements="$root/Tests/WebBrowser/requirements.txt"
build="${SWIFTWING_BUILD_DIR:-$root/.build/debug}"

for tool in chromium chromedriver zbarimg; do
  command -v "$tool" >/dev/null || { echo "web-browser-test: $tool not found: run scripts/install-deps.sh test" >&2; exit 1; }
done
stamp="$venv/.swiftwing-requirements"
if ! { [ -x "$venv/bin/python3" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; }; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv" || { echo "web-browser-test: python3 -m venv failed: install python3-venv" >&2; exit 1; }
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: -r "$requirements"
  cp "$requirements" "$stamp"
fi
exec "$venv/bin/python3" "$root/Tests/WebBrowser/browser_test.py" "$build" "$@"
