#!/usr/bin/env bash
# Creates the OCR worker's virtual environment: Debian's python3 with the pinned packages of
# Sources/swiftwing-recognizer-ocr/requirements.txt (the PP-OCRv6 models come inside rapidocr's wheel; nothing is
# downloaded at run time), and the copies of the models that scripts/quantize_models.py derives from the shipped ones
# (the classifier's hard-swishes fused into its convolutions; the recognizer's MatMul weights in int8). Python 3.11
# and 3.13, x86-64 and aarch64 (scripts/check-repo.sh checks the pins have wheels for all four). Idempotent: an
# environment already made from the same requirements, with its derived models, is kept.
# Needs python3 and python3-venv (scripts/install-deps.sh). Tests and `swiftwing-recognizer` look for the
# environment at .ocr-venv in the checkout unless SWIFTWING_OCR_VENV names another.
# Usage: scripts/ocr-venv.sh [DIR]   (default: .ocr-venv at the repository's root)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/.ocr-venv}"
requirements="$root/Sources/swiftwing-recognizer-ocr/requirements.txt"
python="${PYTHON:-/usr/bin/python3}"
# onnxruntime's telemetry client off while the models are derived and checked (it keeps files under ~/.cache).
export ORT_DISABLE_TELEMETRY=1

stamp="$venv/.swiftwing-requirements"
derived="$venv/swiftwing-models"
# What scripts/quantize_models.py writes (its DERIVED list); ocr_worker.py reads these names.
derived_models=(ch_ppocr_mobile_v2.0_cls_mobile.fused.onnx PP-OCRv6_rec_small.int8.onnx)
complete() {
  local name
  [ -x "$venv/bin/python3" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements" || return 1
  for name in "${derived_models[@]}"; do [ -s "$derived/$name" ] || return 1; done
}
if complete; then
  exit 0
fi
command -v "$python" >/dev/null || { echo "ocr-venv: $python not found: install python3 (scripts/install-deps.sh)" >&2; exit 1; }
rm -rf "$venv"
"$python" -m venv "$venv" || { echo "ocr-venv: '$python -m venv' failed: install python3-venv" >&2; exit 1; }
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: -r "$requirements"
"$venv/bin/python3" "$root/scripts/quantize_models.py"
# The worker imports what it needs and loads the models once: a broken wheel shows here, not on the first photo.
"$venv/bin/python3" - <<'PY'
import os, sys, cv2, numpy, onnxruntime, rapidocr
from importlib.metadata import version
# What ocr_worker.py imports of rapidocr: a dependency missing from requirements.txt (--no-deps) fails here.
import omegaconf, rapidocr.ch_ppocr_cls, rapidocr.ch_ppocr_det, rapidocr.ch_ppocr_rec, rapidocr.inference_engine.onnxruntime
models = os.path.join(os.path.dirname(rapidocr.__file__), "models")
derived = os.path.join(sys.prefix, "swiftwing-models")
for path in [os.path.join(folder, name) for folder in (models, derived) for name in sorted(os.listdir(folder))
             if name.endswith(".onnx")]:
    onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
print(f"ocr-venv: onnxruntime {onnxruntime.__version__}, OpenCV {cv2.__version__}, rapidocr {version('rapidocr')}, "
      f"models: {sorted(os.listdir(models))}, derived: {sorted(os.listdir(derived))}")
PY
cp "$requirements" "$stamp"
complete || { echo "ocr-venv: $derived lacks one of ${derived_models[*]}: scripts/quantize_models.py did not make it" >&2; exit 1; }
