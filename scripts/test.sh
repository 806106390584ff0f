#!/usr/bin/env bash
# Every test of the project, stage by stage, and one count for the whole run:
#   1. repository  scripts/check-repo.sh: nothing outside the checkout is named, licences are there
#   2. unit        every module's tests (Swift Testing / XCTest), in-process
#   3. integration the real binaries as processes (daemon, CLI, reference backend) on loopback, and the
#                  library in a real browser (scripts/web-browser-test.sh)
#   4. fuzz        each libFuzzer target for FUZZ_SECONDS (default 20; scripts/fuzz.sh): one test each
#   5. vm          the VM rig: real kernel drivers under QEMU (scripts/vm/test-all.sh)
# Skipped tests are listed with their reason, never counted as passed. The last line is
#   N passed, N failed, N skipped
# Usage: scripts/test.sh [STAGE...]   (default: all five, in that order)
set -uo pipefail
cd "$(dirname "$0")/.." || exit
export PATH="/opt/swift/usr/bin:$PATH"
swift=${SWIFT:-swift}
read -r -a swift_flags <<<"${SWIFT_FLAGS:-}"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(repository unit integration fuzz vm)

results="$(mktemp -d "${TMPDIR:-/tmp}/swiftwing-test.XXXXXX")"
trap 'rm -rf "$results"' EXIT
passed=0 failed=0 skipped=0
summary=()   # one line per stage
skips=()     # "test — reason"
problems=()  # runs that failed without a failing test to show for it

now() { date +%s; }

# count_xunit FILE...: adds the files' passes, failures and skips; collects the skipped tests' reasons.
count_xunit() {
    local line pass fail skip
    while IFS= read -r line; do
        case "$line" in
            counts\ *) read -r _ pass fail skip <<<"$line"; passed=$((passed + pass)); failed=$((failed + fail)); skipped=$((skipped + skip)) ;;
            skip\ *) skips+=("${line#skip }") ;;
        esac
    done < <(python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
p = f = s = 0
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        continue
    for case in root.iter("testcase"):
        name = f'{case.get("classname", "")}.{case.get("name", "")}'
        if case.find("failure") is not None or case.find("error") is not None:
            f += 1
        elif case.find("skipped") is not None:
            s += 1
            mark = case.find("skipped")
            reason = mark.get("message") or (mark.text or "").strip() or "no reason given"
            print(f"skip {name} — {reason}")
        else:
            p += 1
print(f"counts {p} {f} {s}")
PY
)
}

# swift_stage NAME ARGS...: one `swift test` run whose results are counted from its xUnit files.
swift_stage() {
    local name="$1" start rc before_p before_f before_s
    shift
    start=$(now); before_p=$passed; before_f=$failed; before_s=$skipped
    "$swift" test --skip-build "${swift_flags[@]}" --xunit-output "$results/$name.xml" "$@"
    rc=$?
    count_xunit "$results/$name"*.xml
    if [ "$rc" -ne 0 ] && [ "$failed" -eq "$before_f" ]; then
        # The runner failed without a failing test case (a crash, a build error): count it.
        failed=$((failed + 1))
        problems+=("$name: the test process exited with status $rc without a failing test (a crash? see above)")
    fi
    summary+=("$(printf '%-12s %4d passed, %d failed, %d skipped  (%d s)' "$name" \
        $((passed - before_p)) $((failed - before_f)) $((skipped - before_s)) $(($(now) - start)))")
}

built=0
build_tests() {
    [ "$built" = 1 ] && return 0
    "$swift" build --build-tests --explicit-target-dependency-import-check error "${swift_flags[@]}" || { failed=$((failed + 1)); summary+=("build        FAILED"); return 1; }
    built=1
}

for stage in "${stages[@]}"; do
    echo "== test stage: $stage"
    case "$stage" in
        repository)
            start=$(now)
            out="$(scripts/check-repo.sh)"; echo "$out"
            line="$(tail -n1 <<<"$out")"
            p=$(sed -n 's/^\([0-9]*\) passed.*/\1/p' <<<"$line"); f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")
            passed=$((passed + ${p:-0})); failed=$((failed + ${f:-1}))
            summary+=("$(printf '%-12s %4d passed, %d failed, 0 skipped  (%d s)' repository "${p:-0}" "${f:-1}" $(($(now) - start)))")
            ;;
        unit)
            build_tests || continue
            # Every unit suite in one process: time-driven logic runs on injected clocks, and timing
            # claims are measured on threads the CPU-heavy suites cannot starve.
            swift_stage unit --skip SwiftWingIntegrationTests
            ;;
        integration)
            build_tests || continue
            swift_stage integration --filter SwiftWingIntegrationTests
            # The library in a real browser (headless chromium on loopback): one test per check.
            start=$(now); before_p=$passed; before_f=$failed
            scripts/web-browser-test.sh | tee "$results/browser.log"
            p=$(grep -c '^browser-result [a-z-]* ok' "$results/browser.log")
            f=$(grep -c '^browser-result [a-z-]* fail' "$results/browser.log")
            passed=$((passed + p)); failed=$((failed + f))
            [ $((p + f)) -gt 0 ] || { failed=$((failed + 1)); problems+=("browser: scripts/web-browser-test.sh ran no check"); }
            summary+=("$(printf '%-12s %4d passed, %d failed, 0 skipped  (%d s)' browser $((passed - before_p)) $((failed - before_f)) $(($(now) - start)))")
            ;;
        fuzz)
            start=$(now); before_p=$passed; before_f=$failed
            scripts/fuzz.sh "${FUZZ_SECONDS:-20}" | tee "$results/fuzz.log"
            # One test per target: "ok" passed, "crash" or "no-run" (its build failed) failed.
            p=$(grep -c '^fuzz-result [A-Za-z]* ok' "$results/fuzz.log")
            f=$(grep -cE '^fuzz-result [A-Za-z]* (crash|no-run)' "$results/fuzz.log")
            passed=$((passed + p)); failed=$((failed + f))
            [ $((p + f)) -gt 0 ] || { failed=$((failed + 1)); problems+=("fuzz: scripts/fuzz.sh ran no target"); }
            summary+=("$(printf '%-12s %4d passed, %d failed, 0 skipped  (%d s)' fuzz $((passed - before_p)) $((failed - before_f)) $(($(now) - start)))")
            ;;
        vm)
            start=$(now)
            scripts/install-deps.sh vm || { failed=$((failed + 1)); summary+=("vm           FAILED to install its packages"); continue; }
            # The guest tests run the binaries and the test bundle (camera-swift, gpio-kernel) built here.
            build_tests || continue
            scripts/vm/test-all.sh | tee "$results/vm.log"
            rc=${PIPESTATUS[0]}
            line="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$results/vm.log" | tail -n1)"
            p=$(sed -n 's/^\([0-9]*\) passed.*/\1/p' <<<"$line")
            f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")
            s=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$line")
            p=${p:-0}; f=${f:-0}; s=${s:-0}
            if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$f" -eq 0 ]; then f=1; fi
            passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
            # A SKIP line, then the reason: on the same line in parentheses or on the next "skipped" line.
            while IFS= read -r l; do skips+=("vm: $l"); done < <(awk '
                pending != "" { if ($0 ~ /skipped/) { sub(/^ +/, ""); print pending " — " $0; pending = ""; next }
                                print pending " — no reason given"; pending = "" }
                $2 == "SKIP" { if ($0 ~ /\(/) { r = $0; sub(/^[^(]*\(/, "", r); sub(/\)$/, "", r); print $1 " — " r }
                               else pending = $1 }
                END { if (pending != "") print pending " — no reason given" }' "$results/vm.log")
            summary+=("$(printf '%-12s %4d passed, %d failed, %d skipped  (%d s)' vm "$p" "$f" "$s" $(($(now) - start)))")
            ;;
        *) echo "test.sh: unknown stage '$stage' (repository, unit, integration, fuzz, vm)" >&2; exit 2 ;;
    esac
done

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
if [ ${#problems[@]} -gt 0 ]; then
    echo "failed runs:"
    printf '  %s\n' "${problems[@]}"
fi
if [ ${#skips[@]} -gt 0 ]; then
    echo "skipped (not passed):"
    printf '  %s\n' "${skips[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
