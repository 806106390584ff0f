#!/usr/bin/env bash
# Creates the OCR worker's virtual environment: Debian's python3 with the pinned packages of
# Sources/swiftwing-recognizer-ocr/requirements.txt (the PP-OCR models come inside rapidocr_onnxruntime's wheel;
# nothing is downloaded at run time), and the faster copies of the models that quantize_models.py derives from the
# shipped ones (element-wise steps fused into the convolutions; the recognizer's MatMul weights in int8). Idempotent: an environment already made from the same requirements is kept.
# Needs python3 and python3-venv (scripts/install-deps.sh). Tests and `swiftwing-recognizer` look for the
# environment at .ocr-venv in the checkout unless SWIFTWING_OCR_VENV names another.
# Usage: scripts/ocr-venv.sh [DIR]   (default: .ocr-venv at the repository's root)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/.ocr-venv}"
requirements="$root/Sources/swiftwing-recognizer-ocr/requirements.txt"
python="${PYTHON:-/usr/bin/python3}"

stamp="$venv/.swiftwing-requirements"
derived="$venv/swiftwing-models"
if [ -x "$venv/bin/python3" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements" \
  && [ -f "$derived/ch_PP-OCRv4_rec_infer.int8.onnx" ] && [ -f "$derived/ch_PP-OCRv4_det_infer.fused.onnx" ] \
  && [ -f "$derived/ch_ppocr_mobile_v2.0_cls_infer.fused.onnx" ]; then
  exit 0
fi
command -v "$python" >/dev/null || { echo "ocr-venv: $python not found: install python3 (scripts/install-deps.sh)" >&2; exit 1; }
rm -rf "$venv"
"$python" -m venv "$venv" || { echo "ocr-venv: '$python -m venv' failed: install python3-venv" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: -r "$requirements"
"$venv/bin/python3" "$root/Sources/swiftwing-recognizer-ocr/quantize_models.py"
# The worker imports what it needs and loads the models once: a broken wheel shows here, not on the first photo.
"$venv/bin/python3" - <<'PY'
import os, sys, cv2, numpy, onnxruntime, rapidocr_onnxruntime
models = os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models")
derived = os.path.join(sys.prefix, "swiftwing-models")
for path in [os.path.join(models, name) for name in sorted(os.listdir(models))] + [
        os.path.join(derived, name) for name in sorted(os.listdir(derived))]:
    onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
print(f"ocr-venv: onnxruntime {onnxruntime.__version__}, OpenCV {cv2.__version__}, models: {sorted(os.listdir(models))}, "
      f"derived: {sorted(os.listdir(derived))}")
PY
cp "$requirements" "$stamp"
