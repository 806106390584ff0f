"""SwiftWing's OCR worker: reads the text lines on photos with the PP-OCR models of rapidocr_onnxruntime.

The only Python in the product, kept to the neural step. Started and supervised by the Swift recognizer
(Sources/Recognition/OCRWorker*.swift). Protocol, one photo at a time:
  in  (stdin):  a 4-byte big-endian length, then that many bytes of an encoded image (JPEG, PNG); EOF ends the worker
  out (stdout): one JSON object per line. First {"ready": true, ...} once the models are loaded; then per image
                {"width", "height", "lines": [{"text", "polygon": [{"x", "y"} x4], "score"}], "seconds": {...}}
                or {"error": "..."} for an input it cannot read (the worker stays up).
Polygons are in pixels of the image as decoded (EXIF orientation applied), ordered top-left, top-right,
bottom-right, bottom-left of the text as read, so a spine read bottom-to-top starts at the box's bottom.

Speed: text is found on a copy scaled to --det-side pixels on its long edge, and each box is cut from the
full-resolution image, so small spine text keeps its detail for recognition. A tall box is spine text turned
90 degrees one way or the other: it is turned upright one way and the angle classifier says whether it is then
upside down (--direction cls), or both ways are read and the better score kept (--direction both).
"""

import argparse
import io
import json
import os
import struct
import sys
import time

import cv2
import numpy as np
import onnxruntime
from PIL import Image, ImageOps, UnidentifiedImageError

# The models and the DB/CTC post-processing come from rapidocr_onnxruntime; its pipeline class is not used.
import rapidocr_onnxruntime
from rapidocr_onnxruntime.ch_ppocr_cls import TextClassifier
from rapidocr_onnxruntime.ch_ppocr_det import TextDetector
from rapidocr_onnxruntime.ch_ppocr_rec import TextRecognizer
from rapidocr_onnxruntime.utils import infer_engine

MODELS = os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models")
# A 60 MP photo decodes to 180 MB of pixels; refuse more than this before decoding.
MAX_PIXELS = 40_000_000


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--det-side", type=int, default=1920, help="long edge for text detection, in pixels")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    parser.add_argument("--direction", choices=["cls", "both"], default="cls")
    parser.add_argument("--rec-batch", type=int, default=8)
    parser.add_argument("--min-score", type=float, default=0.5, help="lines read with a lower score are dropped")
    return parser.parse_args()


def session_options(config):
    """onnxruntime's options for the worker: a fixed number of threads that do not spin while waiting (spinning
    burns the cores the service and the device share), and no memory pattern cache (every photo has other shapes)."""
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = config["intra_op_num_threads"]
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


# rapidocr builds each model's session through this hook; the worker's options replace its defaults.
infer_engine.OrtInferSession._init_sess_opts = staticmethod(session_options)


def session_config(model, threads, **extra):
    return dict(
        model_path=os.path.join(MODELS, model), intra_op_num_threads=threads, inter_op_num_threads=1,
        use_cuda=False, use_dml=False, **extra)


class Reader:
    def __init__(self, arguments):
        self.arguments = arguments
        threads = arguments.threads
        self.detector = TextDetector(session_config(
            "ch_PP-OCRv4_det_infer.onnx", threads, limit_side_len=arguments.det_side, limit_type="max",
            mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5], thresh=0.3, box_thresh=0.5, max_candidates=1000,
            unclip_ratio=1.6, use_dilation=True, score_mode="fast"))
        self.classifier = TextClassifier(session_config(
            "ch_ppocr_mobile_v2.0_cls_infer.onnx", threads, cls_image_shape=[3, 48, 192],
            cls_batch_num=arguments.rec_batch, cls_thresh=0.9, label_list=["0", "180"]))
        self.recognizer = TextRecognizer(session_config(
            "ch_PP-OCRv4_rec_infer.onnx", threads, rec_img_shape=[3, 48, 320], rec_batch_num=arguments.rec_batch))

    def read(self, data):
        seconds = {}
        started = time.perf_counter()
        cpu_started = time.process_time()
        image = decode(data)
        height, width = image.shape[:2]
        seconds["decode"] = time.perf_counter() - started

        mark = time.perf_counter()
        scale = min(1.0, self.arguments.det_side / max(width, height))
        small = image if scale == 1.0 else cv2.resize(
            image, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
        boxes, _ = self.detector(small)
        boxes = [] if boxes is None else [box / scale for box in boxes]
        seconds["detect"] = time.perf_counter() - mark

        mark = time.perf_counter()
        crops, corners = [], []
        for box in boxes:
            crop, order = cut_upright(image, box.astype(np.float32))
            crops.append(crop)
            corners.append(box[order])
        seconds["crop"] = time.perf_counter() - mark

        mark = time.perf_counter()
        if crops:
            texts = self.recognize(crops, corners)
        else:
            texts = []
        seconds["recognize"] = time.perf_counter() - mark

        lines = []
        for (text, score), polygon in texts:
            if not text.strip() or score < self.arguments.min_score:
                continue
            lines.append({
                "text": text, "score": round(float(score), 4),
                "polygon": [{"x": round(float(x), 1), "y": round(float(y), 1)} for x, y in polygon]})
        seconds["total"] = time.perf_counter() - started
        seconds["cpu"] = time.process_time() - cpu_started
        return {"width": width, "height": height, "lines": lines,
                "seconds": {key: round(value, 3) for key, value in seconds.items()}}

    def recognize(self, crops, corners):
        if self.arguments.direction == "both":
            # Tall boxes were turned one way; read the opposite turn too and keep the better reading.
            results, _ = self.recognizer(crops)
            flipped = [cv2.rotate(crop, cv2.ROTATE_180) for crop in crops]
            flipped_results, _ = self.recognizer(flipped)
            chosen = []
            for result, flipped_result, polygon in zip(results, flipped_results, corners):
                if flipped_result[1] > result[1]:
                    chosen.append((flipped_result, np.roll(polygon, 2, axis=0)))
                else:
                    chosen.append((result, polygon))
            return chosen
        turned, classes, _ = self.classifier(crops)
        polygons = []
        for (label, score), polygon in zip(classes, corners):
            upside_down = "180" in label and score > 0.9
            polygons.append(np.roll(polygon, 2, axis=0) if upside_down else polygon)
        results, _ = self.recognizer(turned)
        return list(zip(results, polygons))


def decode(data):
    """The photo's pixels (BGR, EXIF orientation applied). PIL rather than cv2.imdecode: OpenCV returns the decoded
    part of a truncated JPEG as if it were whole, PIL says it is truncated."""
    try:
        image = Image.open(io.BytesIO(data))
        width, height = image.size
    except UnidentifiedImageError:
        raise InputError(f"not an image the OCR worker can read ({len(data)} bytes): no JPEG, PNG or other "
                         "image format recognised") from None
    except Exception as error:
        raise InputError(f"not an image the OCR worker can read ({len(data)} bytes): {error}") from None
    if width * height > MAX_PIXELS:
        raise InputError(
            f"image too large: {width}x{height} is {width * height / 1e6:.0f} MP, the OCR worker reads at most "
            f"{MAX_PIXELS / 1e6:.0f} MP; scale it down first")
    try:
        image.load()
        image = ImageOps.exif_transpose(image).convert("RGB")
    except Exception as error:
        raise InputError(
            f"the image could not be decoded ({len(data)} bytes, {width}x{height}): {error}") from None
    return cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR)


def cut_upright(image, box):
    """The box's pixels from the full-resolution image, turned so a tall box reads left to right, and the order of
    the box's corners (indices into tl, tr, br, bl of the image) that is top-left, top-right, bottom-right,
    bottom-left of the crop as returned."""
    width = int(max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3])))
    height = int(max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2])))
    width, height = max(width, 1), max(height, 1)
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(box, target)
    crop = cv2.warpPerspective(
        image, matrix, (width, height), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_LINEAR)
    if height >= 1.5 * width:
        # Turned counter-clockwise: text that ran top to bottom is now upright; its start was the box's top-right.
        return cv2.rotate(crop, cv2.ROTATE_90_COUNTERCLOCKWISE), [1, 2, 3, 0]
    return crop, [0, 1, 2, 3]


class InputError(Exception):
    pass


def read_exactly(stream, count):
    chunks = []
    while count > 0:
        chunk = stream.read(count)
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def main():
    arguments = parse_arguments()
    cv2.setNumThreads(arguments.threads)
    started = time.perf_counter()
    reader = Reader(arguments)
    output = sys.stdout
    output.write(json.dumps({"ready": True, "seconds": round(time.perf_counter() - started, 3)}) + "\n")
    output.flush()
    stdin = sys.stdin.buffer
    while True:
        header = read_exactly(stdin, 4)
        if header is None:
            return 0
        (length,) = struct.unpack(">I", header)
        data = read_exactly(stdin, length)
        if data is None:
            print("ocr worker: input ended inside an image", file=sys.stderr)
            return 1
        try:
            reply = reader.read(data)
        except InputError as error:
            reply = {"error": str(error)}
        output.write(json.dumps(reply, ensure_ascii=False) + "\n")
        output.flush()


if __name__ == "__main__":
    sys.exit(main())
