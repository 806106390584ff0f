#!/usr/bin/env bash
# The repository stands on its own: no tracked file names a path outside it (the folder the
# checkout sits in, or a `shared/` folder beside it), every fixture carries its licence, and the
# project's own LICENSE and NOTICE are there. Prints one line per check and "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit
above="$(cd .. && pwd -P)"
passed=0 failed=0

check() {  # check NAME COMMAND...: the command prints offending lines; none means pass
    local name="$1" out
    shift
    out="$("$@" 2>&1)"
    if [ -z "$out" ]; then
        passed=$((passed + 1)); printf 'PASS  %s\n' "$name"
    else
        failed=$((failed + 1)); printf 'FAIL  %s\n' "$name"; printf '%s\n' "$out" | head -20 | sed 's/^/      /'
    fi
}

# Text files only (-I); this script names the patterns, so it is left out of its own search.
outside_paths() {
    local pattern
    # Spelled in two pieces so that this file does not name them itself.
    local patterns=("../""shared" "/""shared/fixtures" "/""shared/design")
    # The folder above the checkout, unless it is a system folder every script names anyway (/tmp/…).
    case "$above" in
        / | /tmp | /var/tmp | /home | /root | /srv | /opt | /usr | /var | /mnt) ;;
        *) patterns+=("$above/") ;;
    esac
    for pattern in "${patterns[@]}"; do
        git grep -n -I -F -e "$pattern" -- . ':!scripts/check-repo.sh'
    done | sort -u
}
missing_licences() {
    local folder
    for folder in Fixtures/*/; do
        [ -f "$folder/LICENSE" ] || echo "$folder has no LICENSE beside its files"
    done
    [ -f LICENSE ] || echo "LICENSE (Apache-2.0) is missing"
    [ -f NOTICE ] || echo "NOTICE is missing"
    [ -f Fixtures/barcodes/NOTICE ] || echo "Fixtures/barcodes/NOTICE (ZXing's, Apache-2.0 §4d) is missing"
}
cited_docs() {  # every docs/ page a tracked file cites exists
    git grep -h -o -I -E 'docs/[a-z0-9-]+\.md' -- . | sort -u | while read -r page; do
        [ -f "$page" ] || echo "$page is cited but not in the repository"
    done
}

# The daemon's, the exports' (stick, library), the web's and the recognizer's units: `systemd-analyze verify` clean and an exposure of at most 2.0.
# verify needs the ExecStart= binary to exist, so a copy naming /bin/true is checked (only the path
# differs); the export's template is checked as the instance for sda1.
unit_hardening() {
    local limit=2.0 scratch unit copy score
    command -v systemd-analyze >/dev/null || { echo "systemd-analyze is missing: apt-get install systemd"; return; }
    scratch="$(mktemp -d)"
    for unit in systemd/swiftwing.service systemd/swiftwing-export@.service systemd/swiftwing-recognizer.service \
        systemd/swiftwing-web.service systemd/swiftwing-library-export.service; do
        copy="$scratch/$(basename "$unit" | sed 's/@\./@sda1./')"
        sed 's|^ExecStart=[^ ]*|ExecStart=/bin/true|' "$unit" >"$copy"
        systemd-analyze verify "$copy" 2>&1
        score="$(systemd-analyze security --offline=true --no-pager "$copy" 2>&1 |
            sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')"
        if [ -z "$score" ]; then
            echo "$unit: systemd-analyze security printed no exposure level"
        elif awk -v s="$score" -v l="$limit" 'BEGIN { exit !(s > l) }'; then
            echo "$unit: exposure $score is above $limit: see \`systemd-analyze security --offline=true $copy\`"
        fi
    done
    rm -rf "$scratch"
}

# The house format (.swift-format: 4 spaces, 120 columns, ordered imports): `swift format -i -r` fixes most of it.
swift_format() {
    command -v swift >/dev/null || { echo "swift is not on PATH: add /opt/swift/usr/bin (or your toolchain's usr/bin)"; return; }
    swift format lint --strict --recursive --parallel Sources Tests Benchmarks Fuzz Package.swift 2>&1
}
# Every tracked shell script, VM guest tests included; sourced files are followed (-x).
shell_scripts() {
    command -v shellcheck >/dev/null || { echo "shellcheck is missing: apt-get install shellcheck"; return; }
    git ls-files -z -- scripts Tests/VMRig | while IFS= read -r -d '' file; do
        head -n1 "$file" | grep -qE '^#!.*\b(ba)?sh\b' && printf '%s\0' "$file"
    done | xargs -0 -r shellcheck -x 2>&1
}

# The OCR worker's pins (installed with --no-deps --only-binary) resolve to wheels on the four systems it runs on:
# Python 3.11 (bookworm) and 3.13 (trixie, Raspberry Pi OS), x86-64 and aarch64. Several platform tags, as some of
# the wheels are built for manylinux_2_28 only (glibc 2.28; bookworm has 2.36). The four downloads run at once (the
# wheels are ~130 MB a system); pip stops at the first pin it cannot find, whose name is said with the system.
ocr_pins_resolve() {
    local requirements=Sources/swiftwing-recognizer-ocr/requirements.txt scratch interpreter python arch missing
    interpreter="$(command -v python3)" || { echo "python3 is missing: apt-get install python3 python3-venv"; return; }
    scratch="$(mktemp -d)"
    # Debian's python3 has no pip module without python3-pip; a throwaway environment has one (python3-venv).
    if ! "$interpreter" -m pip --version >/dev/null 2>&1; then
        "$interpreter" -m venv "$scratch/venv" >/dev/null 2>&1 ||
            { echo "neither pip nor venv for python3: apt-get install python3-venv"; rm -rf "$scratch"; return; }
        interpreter="$scratch/venv/bin/python3"
    fi
    for python in 3.11 3.13; do
        for arch in x86_64 aarch64; do
            "$interpreter" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
                --platform "manylinux2014_$arch" --platform "manylinux_2_17_$arch" --platform "manylinux_2_28_$arch" \
                --python-version "$python" -r "$requirements" -d "$scratch/$python-$arch" \
                --cache-dir "$scratch/cache-$python-$arch" >"$scratch/$python-$arch.log" 2>&1 ||
                echo failed >"$scratch/$python-$arch.failed" &
        done
    done
    wait
    for python in 3.11 3.13; do
        for arch in x86_64 aarch64; do
            [ -f "$scratch/$python-$arch.failed" ] || continue
            missing="$(sed -n 's/.*No matching distribution found for \([^ ]*\).*/\1/p' "$scratch/$python-$arch.log" | head -1)"
            echo "$requirements: ${missing:-a pin} has no wheel for Python $python on $arch (manylinux 2.28 or older):" \
                "pick a version that has one (pip download --only-binary=:all: --platform manylinux_2_28_$arch" \
                "--python-version $python --no-deps PACKAGE==VERSION)"
            [ -n "$missing" ] || tail -3 "$scratch/$python-$arch.log"
        done
    done
    rm -rf "$scratch"
}

check "no tracked file names a path outside the repository (the folder above it, a shared folder beside it)" outside_paths
check "every fixture folder carries its licence; LICENSE and NOTICE present" missing_licences
check "every cited docs/ page exists" cited_docs
check "systemd/swiftwing.service, swiftwing-export@.service, swiftwing-recognizer.service, swiftwing-web.service, swiftwing-library-export.service: verify clean, exposure <= 2.0" unit_hardening
check "swift format lint --strict over Sources, Tests, Benchmarks, Fuzz" swift_format
check "shellcheck over scripts/ and Tests/VMRig/" shell_scripts
check "the OCR worker's pins have wheels for Python 3.11 and 3.13 on x86-64 and aarch64" ocr_pins_resolve
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
