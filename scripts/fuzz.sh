#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/README.md) and runs each for SECONDS (default 600), then prints
# one line per target:
#   fuzz-result TARGET ok|crash|no-run  runs N  execs/s N  cov N  corpus N  crashes N
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default: every target; FUZZ_JOBS of them at a time, default nproc)
# The corpus grows in .build-fuzz/corpus/TARGET across runs; a crash or hang input is kept in
# .build-fuzz/artifacts/TARGET/ (replay it: swift run FuzzSSE FILE). Exit status 1 if any target crashed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit
export PATH="/opt/swift/usr/bin:$PATH"
swift=${SWIFT:-swift}
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzSSE FuzzStreamEvents FuzzUploadEnvelope FuzzConfiguration FuzzControlMessages FuzzMountTable
    FuzzMultipart FuzzWebInput FuzzCatalogueCSV FuzzUdevProperties FuzzJPEGHeader)
scratch=.build-fuzz

declare -A dictionary=(
    [FuzzSSE]=Fuzz/Dictionaries/sse.dict [FuzzStreamEvents]=Fuzz/Dictionaries/json.dict
    [FuzzUploadEnvelope]=Fuzz/Dictionaries/json.dict [FuzzConfiguration]=Fuzz/Dictionaries/toml.dict
    [FuzzControlMessages]=Fuzz/Dictionaries/control.dict
    [FuzzMountTable]=Fuzz/Dictionaries/mountinfo.dict
    [FuzzMultipart]=Fuzz/Dictionaries/multipart.dict [FuzzWebInput]=Fuzz/Dictionaries/web.dict
    [FuzzCatalogueCSV]=Fuzz/Dictionaries/csv.dict [FuzzUdevProperties]=Fuzz/Dictionaries/udev.dict
    [FuzzJPEGHeader]=Fuzz/Dictionaries/jpeg.dict
)

# seed TARGET FOLDER: the target's seeds from the test fixtures and Fuzz/Seeds/TARGET.
seed() {
    local target="$1" folder="$2"
    mkdir -p "$folder"
    if [ -d "Fuzz/Seeds/$target" ]; then cp "Fuzz/Seeds/$target"/* "$folder"/; fi
    case "$target" in
        FuzzSSE) cp Tests/TalariaTests/Fixtures/talaria-job-stream.sse "$folder/job-stream.sse" ;;
        FuzzStreamEvents)
            # Each event of the fixture stream: one byte choosing its event name, then its data.
            python3 - Tests/TalariaTests/Fixtures/talaria-job-stream.sse "$folder" <<'PY'
import sys
names = ["message", "progress", "status", "result", "book", "completed", "done", "failed", "error",
         "canceled", "timeout", "ping", "enrichment_degraded", "vision_debug"]
event, data, count = "message", [], 0
def flush():
    global event, data, count
    if data:
        selector = names.index(event) if event in names else 0
        with open(f"{sys.argv[2]}/fixture-event-{count}", "wb") as out:
            out.write(bytes([selector]) + "\n".join(data).encode())
        count += 1
    event, data = "message", []
for line in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if not line:
        flush()
    elif line.startswith("event:"):
        event = line[6:].strip()
    elif line.startswith("data:"):
        data.append(line[5:].lstrip(" "))
flush()
PY
            ;;
        FuzzConfiguration) cp config/swiftwing.example.toml "$folder/example.toml" ;;
    esac
}

# field NAME LINE: the number after NAME in a libFuzzer status line ("cov: 123").
field() { sed -n "s/.*[^a-z]$1: *\([0-9]*\).*/\1/p" <<<"$2"; }

# The toolchain's lld links them: gold stops with an internal error on libFuzzer's objects.
mkdir -p "$scratch"
toolset="$scratch/lld-toolset.json"
lld="$(dirname "$(command -v "${SWIFTC:-swiftc}")")/ld.lld"
[ -x "$lld" ] || { echo "fuzz.sh: no ld.lld beside swiftc ($lld); install the Swift toolchain's lld" >&2; exit 1; }
printf '{ "schemaVersion": "1.0", "linker": { "path": "%s" } }\n' "$lld" >"$toolset"

# run_target TARGET: fuzzes one built target and writes its result line to $scratch/TARGET.result.
run_target() {
    local target="$1" binary corpus artifacts log crashes_before rc status_line runs rate corpus_size crashes verdict
    binary="$scratch/release/$target"
    corpus="$scratch/corpus/$target" artifacts="$scratch/artifacts/$target/" log="$scratch/$target.log"
    mkdir -p "$corpus" "$artifacts"
    seed "$target" "$corpus"
    crashes_before=$(find "$artifacts" -type f | wc -l)
    # Swift's own backtracer would take the crash signal from libFuzzer, which then writes no crash input.
    SWIFT_BACKTRACE=enable=no "$binary" "$corpus" -dict="${dictionary[$target]}" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 -artifact_prefix="$artifacts" >"$log" 2>&1
    rc=$?
    status_line="$(grep -E '^#[0-9]+' "$log" | tail -n1)"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    corpus_size=$(find "$corpus" -type f | wc -l)
    crashes=$(($(find "$artifacts" -type f 2>/dev/null | wc -l) - crashes_before))
    verdict=ok
    if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        verdict=crash
        grep -E 'ERROR: libFuzzer|Fatal error|Precondition failed|SUMMARY|Test unit written' "$log" | head -n 8 >&2
    fi
    echo "fuzz-result $target $verdict  runs ${runs:-0}  execs/s ${rate:-0}  cov $(field cov "$status_line")" \
        " corpus $corpus_size  crashes $crashes" >"$scratch/$target.result"
}

# Every target is built first (each build uses every core), then they are fuzzed FUZZ_JOBS at a time (default: one
# per core; each libFuzzer process is single-threaded).
crashed=0
built=()
for target in "${targets[@]}"; do
    if ! "$swift" build -c release --scratch-path "$scratch" --toolset "$toolset" -Xswiftc -sanitize=fuzzer \
        -Xswiftc -DFUZZING --product "$target" >"$scratch/$target.build.log" 2>&1; then
        cat "$scratch/$target.build.log" >&2
        echo "fuzz-result $target no-run  the build failed (log above)"
        crashed=1
        continue
    fi
    built+=("$target")
done
jobs_at_once=${FUZZ_JOBS:-$(nproc)}
for target in "${built[@]}"; do
    rm -f "$scratch/$target.result"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
    run_target "$target" &
done
wait
for target in "${built[@]}"; do
    if [ -s "$scratch/$target.result" ]; then
        cat "$scratch/$target.result"
        grep -q "^fuzz-result $target ok" "$scratch/$target.result" || crashed=1
    else
        echo "fuzz-result $target crash  the fuzzing run left no result (see $scratch/$target.log)"
        crashed=1
    fi
done
exit "$crashed"
