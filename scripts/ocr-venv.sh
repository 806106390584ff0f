#!/usr/bin/env bash
# Creates the OCR worker's virtual environment: Debian's python3 with the pinned packages of
# Sources/swiftwing-recognizer-ocr/requirements.txt (the PP-OCR models come inside rapidocr_onnxruntime's wheel;
# nothing is downloaded at run time). Idempotent: an environment already made from the same requirements is kept.
# Needs python3 and python3-venv (scripts/install-deps.sh). Tests and `swiftwing-recognizer` look for the
# environment at .ocr-venv in the checkout unless SWIFTWING_OCR_VENV names another.
# Usage: scripts/ocr-venv.sh [DIR]   (default: .ocr-venv at the repository's root)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/.ocr-venv}"
requirements="$root/Sources/swiftwing-recognizer-ocr/requirements.txt"
python="${PYTHON:-/usr/bin/python3}"

stamp="$venv/.swiftwing-requirements"
if [ -x "$venv/bin/python3" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
  exit 0
fi
command -v "$python" >/dev/null || { echo "ocr-venv: $python not found: install python3 (scripts/install-deps.sh)" >&2; exit 1; }
rm -rf "$venv"
"$python" -m venv "$venv" || { echo "ocr-venv: '$python -m venv' failed: install python3-venv" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: -r "$requirements"
# The worker imports what it needs and loads the models once: a broken wheel shows here, not on the first photo.
"$venv/bin/python3" - <<'PY'
import os, cv2, numpy, onnxruntime, rapidocr_onnxruntime
models = os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models")
for name in sorted(os.listdir(models)):
    onnxruntime.InferenceSession(os.path.join(models, name), providers=["CPUExecutionProvider"])
print(f"ocr-venv: onnxruntime {onnxruntime.__version__}, OpenCV {cv2.__version__}, models: {sorted(os.listdir(models))}")
PY
cp "$requirements" "$stamp"
