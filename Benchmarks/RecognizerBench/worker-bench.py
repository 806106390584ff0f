"""The OCR worker alone on the two annotated shelf photos: seconds and peak resident memory of detection and of
recognition, per photo, with the worker warm. Run by the worker's own interpreter (.ocr-venv/bin/python3).

Usage: worker-bench.py [--size 1920|full] [--save-ocr DIR] [--worker DIR] [--ort NAME=VALUE...] [--] [WORKER OPTION...]
--worker runs the ocr_worker.py in DIR instead of the checkout's (e.g. another version, for a before/after in one run).
--ort sets an onnxruntime SessionOptions attribute over the worker's own (a Python literal or an onnxruntime
enum member's path, e.g. enable_cpu_mem_arena=True, graph_optimization_level=GraphOptimizationLevel.ORT_ENABLE_BASIC,
execution_mode=ExecutionMode.ORT_PARALLEL), to measure a setting without editing the worker.
The photos are scaled as bench.sh scales them (long edge SIZE, JPEG quality 90); the first is read twice and its
first read (warm-up) is not counted. With --save-ocr the lines go to DIR/SIZE-NAME.json, the form
`swiftwing-recognizer read --ocr-from` takes, so `OCR_FROM=DIR bench.sh SIZE` scores recall on exactly these lines.
"""
import argparse
import io
import json
import os
import struct
import subprocess
import sys

from PIL import Image

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
photos = ["Fixtures/shelves/one_shelf.jpg", "Fixtures/shelves/two_shelves.jpg"]

parser = argparse.ArgumentParser()
parser.add_argument("--size", default="1920")
parser.add_argument("--save-ocr")
parser.add_argument("--ort", action="append", default=[])
parser.add_argument("--worker", default=os.path.join(root, "Sources/swiftwing-recognizer-ocr"))
parser.add_argument("worker_options", nargs="*")
arguments = parser.parse_args()

encoded = []
for photo in photos:
    image = Image.open(os.path.join(root, photo))
    if arguments.size != "full":
        scale = int(arguments.size) / max(image.size)
        image = image.resize((round(image.width * scale), round(image.height * scale)), Image.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90)
    name = os.path.splitext(os.path.basename(photo))[0]
    encoded.append((f"{arguments.size}-{name}", buffer.getvalue()))

# The worker run as itself, with the --ort settings laid over its session options (-B: no bytecode cache left in the
# checkout by the import).
launcher = """
import ast, sys, onnxruntime
sys.path.insert(0, sys.argv[1])
import ocr_worker
overrides = [setting.split("=", 1) for setting in sys.argv[2].split(";") if setting]
worker_options = ocr_worker.session_options
def session_options(config):
    options = worker_options(config)
    for name, value in overrides:
        if value.split(".")[0] in ("GraphOptimizationLevel", "ExecutionMode"):
            kind, member = value.split(".")
            setattr(options, name, getattr(getattr(onnxruntime, kind), member))
        else:
            setattr(options, name, ast.literal_eval(value))
    return options
ocr_worker.OrtInferSession._init_sess_opts = staticmethod(session_options)
sys.argv = ["ocr_worker.py"] + sys.argv[3:]
sys.exit(ocr_worker.main())
"""
worker = subprocess.Popen(
    [sys.executable, "-B", "-c", launcher, arguments.worker, ";".join(arguments.ort),
     "--stage-memory"] + arguments.worker_options, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
ready = json.loads(worker.stdout.readline())
settings = " ".join(arguments.ort + arguments.worker_options) or "(defaults)"
print(f"options {settings}: models loaded in {ready['seconds']} s: {ready.get('models', '(not named)')}")
rows = []
for index, (name, data) in enumerate([encoded[0]] + encoded):
    worker.stdin.write(struct.pack(">I", len(data)) + data)
    worker.stdin.flush()
    reply = json.loads(worker.stdout.readline())
    if index == 0:
        continue
    seconds, peaks, cpu = reply["seconds"], reply["peakMB"], reply["cpuSeconds"]
    print(f"  {name}: {len(reply['lines'])} lines, {seconds['total']:.2f} s wall, {seconds['cpu']:.2f} s CPU; "
          f"detect {seconds['detect']:.2f} s wall {cpu['detect']:.2f} s CPU {peaks['detect']:.0f} MB; "
          f"recognize {seconds['crop'] + seconds['recognize']:.2f} s wall {cpu['recognize']:.2f} s CPU "
          f"{peaks['recognize']:.0f} MB")
    rows.append((seconds["total"], seconds["cpu"], max(peaks.values())))
    if arguments.save_ocr:
        os.makedirs(arguments.save_ocr, exist_ok=True)
        with open(os.path.join(arguments.save_ocr, name + ".json"), "w") as saved:
            json.dump({key: reply[key] for key in ("width", "height", "lines")}, saved, ensure_ascii=False)
worker.stdin.close()
worker.wait()
print(f"  mean {sum(r[0] for r in rows) / len(rows):.2f} s wall, {sum(r[1] for r in rows) / len(rows):.2f} s CPU a "
      f"photo, peak {max(r[2] for r in rows):.0f} MB")
