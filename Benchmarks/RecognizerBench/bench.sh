#!/usr/bin/env bash
# End-to-end benchmark of the recognizer on the repository's two annotated shelf photos, at the long edges the kiosk
# could upload: recall of the annotated books, precision of the books reported with confidence >= 0.8, seconds per
# photo with the worker warm, and the OCR worker's peak resident memory. Figures: Benchmarks/README.md.
# Needs the OCR worker's environment (scripts/ocr-venv.sh) and a release build of swiftwing-recognizer.
# Usage: Benchmarks/RecognizerBench/bench.sh [SIZE...]   (default: 1920 2560 3200 full)
#   CONFIGURATION=debug uses a debug build; RECOGNIZER=BIN uses that binary and builds nothing. The worker is the one
#   the recognizer finds (SWIFTWING_OCR_VENV and SWIFTWING_OCR_WORKER name another, e.g. an older one to compare).
#   DET_SIDE=N sets the worker's detection size (default 1600, the worker's own).
#   SAVE_OCR=DIR keeps the OCR worker's lines (DIR/SIZE-NAME.json); OCR_FROM=DIR then scores grouping and matching
#   on those lines in seconds, without the worker (its times and memory are then not measured).
#   DETAIL=1 lists each photo's spines, right or wrong, and the annotated books missed.
# Usage: Benchmarks/RecognizerBench/bench.sh --data DIR [SHELF-BENCH OPTION...]
#   A folder of annotated home-shelf photos (photos/*.jpg, annotations.csv, catalogue-goodreads.csv: the home-shelves
#   layout), read as they are and matched against its Goodreads catalogue and an owner's catalogue (shelf-bench.py).
#   BASELINE=DIR also measures, in the same run, the recognizer DIR/swiftwing-recognizer with the worker
#   DIR/ocr_worker.py (e.g. a build of an older commit and that commit's worker), run by DIR/bin/python3 when DIR is
#   also that worker's virtual environment (e.g. a copy of the PP-OCRv4 .ocr-venv with its ocr_worker.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export PATH="/opt/swift/usr/bin:$PATH"
if [ "${1:-}" = "--data" ]; then
  [ -n "${2:-}" ] || { echo "bench: --data needs a folder (photos/, annotations.csv, catalogue-goodreads.csv)" >&2; exit 1; }
  data="$2"; shift 2
  python="$root/.ocr-venv/bin/python3"
  [ -x "$python" ] || { echo "bench: no OCR environment: run scripts/ocr-venv.sh" >&2; exit 1; }
  configuration="${CONFIGURATION:-release}"
  recognizer="${RECOGNIZER:-}"
  if [ -z "$recognizer" ]; then
    swift build -c "$configuration" --product swiftwing-recognizer >/dev/null
    recognizer="$(swift build -c "$configuration" --show-bin-path)/swiftwing-recognizer"
  fi
  baseline=()
  [ -z "${BASELINE:-}" ] || baseline=(--baseline-recognizer "$BASELINE/swiftwing-recognizer" --baseline-worker "$BASELINE")
  exec "$python" Benchmarks/RecognizerBench/shelf-bench.py --data "$data" --recognizer "$recognizer" \
    ${baseline[@]+"${baseline[@]}"} ${DETAIL:+--detail} "$@"
fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1920 2560 3200 full)
python="$root/.ocr-venv/bin/python3"
[ -x "$python" ] || { echo "bench: no OCR environment: run scripts/ocr-venv.sh" >&2; exit 1; }
configuration="${CONFIGURATION:-release}"   # debug: the OCR worker's time is the same, matching is slower
recognizer="${RECOGNIZER:-}"
if [ -z "$recognizer" ]; then
  swift build -c "$configuration" --product swiftwing-recognizer >/dev/null
  recognizer="$(swift build -c "$configuration" --show-bin-path)/swiftwing-recognizer"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/recognizer-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

for size in "${sizes[@]}"; do
  # The photos scaled to SIZE on their long edge (JPEG quality 90, as the kiosk encodes), named SIZE-NAME.jpg.
  "$python" - "$size" "$work" Fixtures/shelves/one_shelf.jpg Fixtures/shelves/two_shelves.jpg <<'PY'
import sys
from PIL import Image
size, work, photos = sys.argv[1], sys.argv[2], sys.argv[3:]
for photo in photos:
    name = photo.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    image = Image.open(photo)
    if size != "full":
        scale = int(size) / max(image.size)
        image = image.resize((round(image.width * scale), round(image.height * scale)), Image.LANCZOS)
    image.save(f"{work}/{size}-{name}.jpg", quality=90)
PY
  # The first photo twice: its first read warms the worker (models loaded, first shapes planned) and is not counted.
  ocr=()
  [ -z "${SAVE_OCR:-}" ] || { mkdir -p "$SAVE_OCR"; ocr=(--save-ocr "$SAVE_OCR"); }
  [ -z "${OCR_FROM:-}" ] || ocr=(--ocr-from "$OCR_FROM")
  "$recognizer" read --catalogue Fixtures/library-dataset/catalogue.csv --json --timings \
    --detection-size "${DET_SIDE:-1600}" ${ocr[@]+"${ocr[@]}"} \
    "$work/$size-one_shelf.jpg" "$work/$size-one_shelf.jpg" "$work/$size-two_shelves.jpg" >"$work/raw-$size.json"
  python3 - "$work/raw-$size.json" "$work/$size.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
result["images"] = result["images"][1:]
json.dump(result, open(sys.argv[2], "w"))
PY
  echo "size $size (detection ${DET_SIDE:-1600}):"
  python3 Benchmarks/RecognizerBench/evaluate.py ${DETAIL:+--detail} Fixtures/library-dataset/annotations.csv \
    "$work/$size.json"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('  worker peak MB:', max(i.get('workerPeakMB') or 0 for i in r['images']))" "$work/$size.json"
  [ -z "${KEEP:-}" ] || cp "$work/$size.json" "${KEEP}/recognizer-$size.json"
done
