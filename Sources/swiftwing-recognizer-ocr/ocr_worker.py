"""SwiftWing's OCR worker: reads the text lines on photos with the PP-OCRv6 models that rapidocr's wheel ships.

The only Python in the product, kept to the neural step. Started and supervised by the Swift recognizer
(Sources/Recognition/OCRWorker*.swift). Protocol, one photo at a time:
  in  (stdin):  a 4-byte big-endian length, then that many bytes of an encoded image (JPEG, PNG); EOF ends the worker
  out (stdout): one JSON object per line. First {"ready": true, ...} once the models are loaded; then per image
                {"width", "height", "lines": [{"text", "polygon": [{"x", "y"} x4], "score"}], "seconds": {...}}
                or {"error": "..."} for an input it cannot read (the worker stays up).
Polygons are in pixels of the image as decoded (EXIF orientation applied), ordered top-left, top-right,
bottom-right, bottom-left of the text as read, so a spine read bottom-to-top starts at the box's bottom.

Models: rapidocr 3.10.0's wheel holds PP-OCRv6 small detection and recognition and the v2.0 angle classifier
(Apache-2.0, its MODEL_LICENSES.md); every model is given to rapidocr by its path, so nothing is downloaded, ever.
Only rapidocr's per-model steps are used (its pre/post-processing and onnxruntime session), not its pipeline class.

Speed: text is found on a copy scaled to --det-side pixels on its long edge, and each box is cut from the
full-resolution image, so small spine text keeps its detail for recognition. Memory: the copy is searched in
--det-strips side-by-side strips, one at a time, as the detector's feature maps are most of the worker's peak; the
detector plans each run's tensors in one block (a memory pattern), and freed memory goes back to the system after
each strip and each photo.
Recognition pads each crop only to --rec-min-width (most spine lines are short) and uses the int8 model that
scripts/ocr-venv.sh derives from the shipped one (--rec-model), in batches bounded by their total width (memory).
The classifier runs as the copy scripts/quantize_models.py derives, its hard-swishes fused into the convolutions
(the same outputs, less CPU); without a copy the shipped model is read, and stderr says so. The detector runs as
shipped. Benchmarks/README.md has the measures.
A tall box is spine text turned 90 degrees one way or the other: it is turned upright one way and the angle
classifier says whether it is then upside down (--direction cls), or both ways are read and the better score kept
(--direction both).
"""

import argparse
import ctypes
import io
import json
import logging
import math
import os
import struct
import sys
import time

# onnxruntime 1.32 starts a telemetry client when it loads, which keeps a device id and an event store under
# ~/.cache/Microsoft/DeveloperTools; this turns it off, and must be set before onnxruntime is imported.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

import cv2  # noqa: E402 (after the environment is set)
import numpy as np  # noqa: E402
import onnxruntime  # noqa: E402
from omegaconf import OmegaConf
from PIL import Image, ImageOps, UnidentifiedImageError

# The models and their pre/post-processing come from rapidocr (3.x); its pipeline class (RapidOCR) is not used.
import rapidocr
from rapidocr.ch_ppocr_cls import TextClassifier
from rapidocr.ch_ppocr_det import TextDetector
from rapidocr.ch_ppocr_det.utils import DetPreProcess
from rapidocr.ch_ppocr_rec import TextRecognizer
from rapidocr.ch_ppocr_rec.typings import TextRecInput
from rapidocr.inference_engine.onnxruntime import OrtInferSession
from rapidocr.utils.typings import EngineType, LangCls, LangDet, LangRec, ModelType, OCRVersion

# rapidocr logs each model it loads at INFO on stderr; the supervisor keeps stderr's tail for errors, so only warnings.
logging.getLogger("RapidOCR").setLevel(logging.WARNING)

MODELS = os.path.join(os.path.dirname(rapidocr.__file__), "models")
# Models derived from those at install time (scripts/ocr-venv.sh runs scripts/quantize_models.py), in the environment.
DERIVED_MODELS = os.path.join(sys.prefix, "swiftwing-models")
DETECTION_MODEL = "PP-OCRv6_det_small.onnx"
CLASSIFICATION_MODEL = "ch_ppocr_mobile_v2.0_cls_mobile.onnx"
RECOGNITION_MODEL = "PP-OCRv6_rec_small.onnx"
RECOGNITION_MODEL_INT8 = "PP-OCRv6_rec_small.int8.onnx"
# Shipped model -> its copy with the element-wise steps fused into the convolutions (scripts/quantize_models.py).
# The detector has none that onnxruntime does not fuse itself: it is read as shipped.
FUSED_MODELS = {
    CLASSIFICATION_MODEL: "ch_ppocr_mobile_v2.0_cls_mobile.fused.onnx",
}
# A 60 MP photo decodes to 180 MB of pixels; refuse more than this before decoding.
MAX_PIXELS = 40_000_000


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--det-side", type=int, default=1600,
                        help="long edge for text detection, in pixels (on home shelves PP-OCRv6 small finds as much at "
                             "1600 as at 1920 for 25 %% less CPU, and less at 1440: Benchmarks/README.md)")
    parser.add_argument("--det-strips", type=int, default=3,
                        help="find text on this many side-by-side strips of the scaled copy, one at a time, to bound "
                             "the detector's memory (its feature maps grow with the area it sees at once)")
    parser.add_argument("--threads", type=int, default=0,
                        help="onnxruntime intra-op threads (0: the cores this process may run on)")
    parser.add_argument("--direction", choices=["cls", "both"], default="cls")
    parser.add_argument("--second-pass", type=float, default=0.85,
                        help="a tall line read with a lower score is read again turned the other way and the better "
                             "reading kept (0: never)")
    parser.add_argument("--separators", choices=["on", "off"], default="on",
                        help="find the boundaries between books on the picture (long near-vertical edges) and send "
                             "them with the lines")
    parser.add_argument("--det-model-file", help="measuring: a detection model file instead of the worker's own")
    parser.add_argument("--rec-model-file", help="measuring: a recognition model file instead of the worker's own")
    parser.add_argument("--rec-keys-file", help="measuring: the character list of --rec-model-file, when its "
                        "metadata has none")
    parser.add_argument("--rec-batch", type=int, default=8, help="at most this many lines read at once")
    parser.add_argument("--rec-batch-width", type=int, default=2560,
                        help="at most this many pixels of padded width (at the recognizer's 48 px height) in one "
                             "batch: bounds the recognizer's memory (a single wider line is read alone)")
    parser.add_argument("--rec-min-width", type=int, default=96,
                        help="narrowest input of the recognizer, in pixels at its 48 px height: shorter crops are "
                             "padded to it (its cost grows with the padded width)")
    parser.add_argument("--rec-model", choices=["auto", "float", "int8"], default="auto",
                        help="the recognition model as the wheel ships it, or its int8 copy (scripts/ocr-venv.sh); "
                             "auto: the int8 copy when the environment has it")
    parser.add_argument("--fused", choices=["on", "off"], default="on",
                        help="measuring: off reads the classifier as shipped instead of its fused copy")
    parser.add_argument("--derived-models", default=DERIVED_MODELS,
                        help="the folder of the models scripts/ocr-venv.sh derives (default: the environment's own)")
    parser.add_argument("--min-score", type=float, default=0.5, help="lines read with a lower score are dropped")
    parser.add_argument("--stage-memory", action="store_true",
                        help="benchmarks: add each stage's peak resident memory (MB) to the reply as peakMB")
    return parser.parse_args()


def session_options(config):
    """onnxruntime's options for the worker: a fixed number of threads that do not spin while waiting (spinning
    burns the cores the service and the device share), no CPU arena (it keeps every size it ever held), and a memory
    pattern only where asked (config["memory_pattern"]). The pattern plans a run's tensors into one block, allocated
    for the run and freed after it, instead of hundreds of allocations that glibc's heap keeps fragments of; it is
    cached per input shape, so it suits the detector (every strip of a photo has one shape, photos of one camera
    too) and not the recognizer (every batch has its own width)."""
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = bool(config.get("memory_pattern", False))
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = config["intra_op_num_threads"]
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


# rapidocr builds each model's session through this hook (with the model's engine_cfg); the worker's options replace
# its defaults.
OrtInferSession._init_sess_opts = staticmethod(session_options)


def session_config(model, folder, threads, task, version, language, kind, **extra):
    """rapidocr's configuration of one model (an OmegaConf tree, as its classes read it by attribute): the model by
    its path, so rapidocr never looks for it in its registry or downloads it; onnxruntime on the CPU."""
    engine = dict(intra_op_num_threads=threads, inter_op_num_threads=1, enable_cpu_mem_arena=False,
                  memory_pattern=bool(extra.pop("memory_pattern", False)), use_cuda=False, use_dml=False,
                  use_cann=False, use_coreml=False, cpu_ep_cfg={"arena_extend_strategy": "kSameAsRequested"})
    config = OmegaConf.create(dict(
        model_path=os.path.join(folder, model), model_dir=None, model_root_dir=None, task_type=task,
        ocr_version=version, lang_type=language, model_type=kind, engine_cfg=engine, font_path=None, **extra))
    # Enums are kept as they are (OmegaConf would keep only their names): rapidocr compares and indexes by them.
    config.engine_type = EngineType.ONNXRUNTIME
    return config


def recognition_model(choice, derived_models=DERIVED_MODELS):
    """The recognition model's file name and folder for --rec-model."""
    if choice == "float":
        return RECOGNITION_MODEL, MODELS
    path = os.path.join(derived_models, RECOGNITION_MODEL_INT8)
    if choice == "auto" and not os.path.isfile(path):
        # An environment made before the int8 copy existed still reads, slower.
        print(f"ocr_worker: no int8 recognition model at {path}; reading with the float model. Run "
              "scripts/ocr-venv.sh on this environment to make it.", file=sys.stderr, flush=True)
        return RECOGNITION_MODEL, MODELS
    if not os.path.isfile(path):
        raise SetupError(f"no int8 recognition model at {path}: scripts/ocr-venv.sh makes it when it makes the "
                         "environment (or run scripts/quantize_models.py with the environment's python3)")
    return RECOGNITION_MODEL_INT8, derived_models


def fused_model(shipped, derived_models=DERIVED_MODELS, fused="on"):
    """The file name and folder of a shipped model's fused copy, or of the shipped model when the copy is missing
    (said on stderr: it computes the same, slower) or not wanted (--fused off)."""
    if fused == "off":
        return shipped, MODELS
    path = os.path.join(derived_models, FUSED_MODELS[shipped])
    if os.path.isfile(path):
        return FUSED_MODELS[shipped], derived_models
    print(f"ocr_worker: no fused copy of {shipped} at {path}; reading with the shipped model. Run "
          "scripts/ocr-venv.sh on this environment to make it.", file=sys.stderr, flush=True)
    return shipped, MODELS


def has_character_list(path):
    """Whether a recognition model carries its character list in its metadata (rapidocr downloads one otherwise)."""
    try:
        return "character" in onnxruntime.InferenceSession(
            path, providers=["CPUExecutionProvider"]).get_modelmeta().custom_metadata_map
    except Exception as error:
        raise SetupError(f"cannot load the recognition model {path}: {error}") from None


class Reader:
    def __init__(self, arguments):
        self.arguments = arguments
        threads = arguments.threads or available_cores()
        detection = (DETECTION_MODEL, MODELS)
        classification = fused_model(CLASSIFICATION_MODEL, arguments.derived_models, arguments.fused)
        recognition = recognition_model(arguments.rec_model, arguments.derived_models)
        if arguments.det_model_file:
            detection = (os.path.basename(arguments.det_model_file), os.path.dirname(arguments.det_model_file))
        if arguments.rec_model_file:
            recognition = (os.path.basename(arguments.rec_model_file), os.path.dirname(arguments.rec_model_file))
        for name, folder in (detection, classification, recognition):
            if not os.path.isfile(os.path.join(folder, name)):
                raise SetupError(f"no model at {os.path.join(folder, name)}: scripts/ocr-venv.sh makes the "
                                 "environment with rapidocr's wheel, which holds the models")
        keys = {}
        if arguments.rec_keys_file:
            keys = {"rec_keys_path": arguments.rec_keys_file}
        elif arguments.rec_model_file and not has_character_list(arguments.rec_model_file):
            # rapidocr would fetch a character list from the network: never at run time. (The wheel's model and its
            # int8 copy carry theirs; tests check.)
            raise SetupError(f"the recognition model {arguments.rec_model_file} has no character list in its "
                             "metadata: give one with --rec-keys-file")
        # The files read, for the ready line (tests and benchmarks check which models a worker runs).
        self.models = {stage: os.path.join(folder, name) for stage, (name, folder) in
                       [("detect", detection), ("classify", classification), ("recognize", recognition)]}
        self.detector = Detector(session_config(
            *detection, threads, "det", OCRVersion.PPOCRV6, LangDet.CH, ModelType.SMALL,
            limit_side_len=arguments.det_side, limit_type="max",
            mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5], thresh=0.3, box_thresh=0.5, max_candidates=1000,
            unclip_ratio=1.6, use_dilation=True, score_mode="fast", memory_pattern=True))
        self.classifier = TextClassifier(session_config(
            *classification, threads, "cls", OCRVersion.PPOCRV4, LangCls.CH, ModelType.MOBILE,
            cls_batch_num=arguments.rec_batch, cls_thresh=0.9, label_list=["0", "180"]))
        self.recognizer = TextRecognizer(session_config(
            *recognition, threads, "rec", OCRVersion.PPOCRV6, LangRec.CH, ModelType.SMALL,
            rec_img_shape=[3, 48, arguments.rec_min_width], rec_batch_num=arguments.rec_batch, **keys))

    def read_texts(self, crops):
        """(text, score) for each crop, in order. The crops go to the recognizer in batches of similar shape (as
        rapidocr batches them: by width over height) whose padded widths add up to at most --rec-batch-width: its
        memory grows with a batch's total width (eight 1,200 px lines took 520 MB more, eight of 320 px 140 MB)."""
        widths = [max(self.arguments.rec_min_width, math.ceil(48 * crop.shape[1] / max(crop.shape[0], 1)))
                  for crop in crops]
        order = sorted(range(len(crops)), key=lambda index: widths[index])
        batches, batch = [], []
        for index in order:
            # Sorted by width, so the newest crop is the widest: the batch would be padded to it.
            if batch and (len(batch) == self.arguments.rec_batch
                          or (len(batch) + 1) * widths[index] > self.arguments.rec_batch_width):
                batches.append(batch)
                batch = []
            batch.append(index)
        if batch:
            batches.append(batch)
        texts = [("", 0.0)] * len(crops)
        for batch in batches:
            result = self.recognizer(TextRecInput(img=[crops[index] for index in batch]))
            for index, text, score in zip(batch, result.txts, result.scores):
                texts[index] = (text, score)
        return texts

    def read(self, data):
        seconds = {}
        peaks = StagePeaks(self.arguments.stage_memory)
        started = time.perf_counter()
        cpu_started = time.process_time()
        # A photo larger than the detector's side is decoded twice: reduced for detection (JPEG's DCT scaling: less
        # work, and 3 MB instead of 48 MB for 16 MP held while the detector runs), then whole for the crops.
        pixels, (width, height) = decode(data, longest=self.arguments.det_side)
        seconds["decode"] = time.perf_counter() - started
        peaks.end("decode")

        mark = time.perf_counter()
        scale = min(1.0, self.arguments.det_side / max(width, height))
        target = (round(width * scale), round(height * scale))
        small = pixels if (pixels.shape[1], pixels.shape[0]) == target else cv2.resize(
            pixels, target, interpolation=cv2.INTER_AREA)
        image = pixels if scale == 1.0 else None
        del pixels
        boxes = [box / scale for box in detect_in_strips(self.detector, small, self.arguments.det_strips)]
        seconds["detect"] = time.perf_counter() - mark
        mark = time.perf_counter()
        separators = spine_separators(small, scale) if self.arguments.separators == "on" else []
        seconds["separate"] = time.perf_counter() - mark
        mark = time.perf_counter()
        del small
        release_freed_memory()
        seconds["detect"] += time.perf_counter() - mark
        peaks.end("detect")

        mark = time.perf_counter()
        if image is None:
            image = decode_again(data, (width, height))
        crops, corners = [], []
        for box in boxes:
            crop, order = cut_upright(image, box.astype(np.float32))
            crops.append(crop)
            corners.append(box[order])
        # The crops are all recognition needs of the photo: its pixels (36 MB at 12 MP) go before it runs.
        del image
        seconds["crop"] = time.perf_counter() - mark

        mark = time.perf_counter()
        if crops:
            texts = self.recognize(crops, corners)
        else:
            texts = []
        del crops
        release_freed_memory()
        seconds["recognize"] = time.perf_counter() - mark
        peaks.end("recognize")

        lines = []
        for (text, score), polygon in texts:
            if not text.strip() or score < self.arguments.min_score:
                continue
            lines.append({
                "text": text, "score": round(float(score), 4),
                "polygon": [{"x": round(float(x), 1), "y": round(float(y), 1)} for x, y in polygon]})
        seconds["total"] = time.perf_counter() - started
        seconds["cpu"] = time.process_time() - cpu_started
        reply = {"width": width, "height": height, "lines": lines, "separators": separators,
                 "seconds": {key: round(value, 3) for key, value in seconds.items()}}
        if peaks.enabled:
            reply["peakMB"] = peaks.megabytes
            reply["cpuSeconds"] = peaks.cpu_seconds
        return reply

    def recognize(self, crops, corners):
        if self.arguments.direction == "both":
            # Tall boxes were turned one way; read the opposite turn too and keep the better reading.
            results = self.read_texts(crops)
            flipped = [cv2.rotate(crop, cv2.ROTATE_180) for crop in crops]
            flipped_results = self.read_texts(flipped)
            chosen = []
            for result, flipped_result, polygon in zip(results, flipped_results, corners):
                if flipped_result[1] > result[1]:
                    chosen.append((flipped_result, np.roll(polygon, 2, axis=0)))
                else:
                    chosen.append((result, polygon))
            return chosen
        classified = self.classifier(crops)
        turned, classes = classified.img_list, classified.cls_res
        polygons = []
        for (label, score), polygon in zip(classes, corners):
            upside_down = "180" in label and score > 0.9
            polygons.append(np.roll(polygon, 2, axis=0) if upside_down else polygon)
        results = self.read_texts(turned)
        chosen = list(zip(results, polygons))
        # A second look where it pays: a tall line (a spine's title) read poorly may have been turned the wrong way
        # (the classifier is least sure on stylised type); its other turn is read and the better reading kept.
        again = [index for index, (polygon, ((_, score), _)) in enumerate(zip(corners, chosen))
                 if score < self.arguments.second_pass and is_tall(polygon)]
        if again:
            flipped = self.read_texts([cv2.rotate(turned[index], cv2.ROTATE_180) for index in again])
            for index, result in zip(again, flipped):
                if result[1] > chosen[index][0][1]:
                    chosen[index] = (result, np.roll(chosen[index][1], 2, axis=0))
        return chosen


def is_tall(polygon):
    """Whether a box's text runs up or down the photo (its crop was turned a quarter to be read)."""
    along = np.linalg.norm(polygon[1] - polygon[0])
    across = np.linalg.norm(polygon[3] - polygon[0])
    return abs(polygon[1][1] - polygon[0][1]) > abs(polygon[1][0] - polygon[0][0]) or across >= 1.5 * along


def available_cores():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# Boundaries between books: a spine's edge is a long, near-vertical change of brightness or colour that runs most of
# a book's height; letters' strokes are short. Lengths are shares of the detection copy's long edge.
SEPARATOR_MIN_LENGTH = 0.07
SEPARATOR_MAX_GAP = 0.008
# At most this far from vertical (dx/dy): spines lean with the camera and on the shelf, seldom by more.
SEPARATOR_MAX_LEAN = 0.3
SEPARATOR_SIDE = 1024


def spine_separators(image, scale):
    """Long near-vertical edges on the detection copy (Canny on each channel of Lab, so a change of colour at equal
    brightness counts too; only edges whose gradient runs mostly across; probabilistic Hough for straight runs),
    in the full photo's pixels, each {"top": {x, y}, "bottom": {x, y}}. The recognizer's grouper drops those that run
    through text and never joins lines on the two sides of one that remains."""
    # A book's edge is many pixels long: a copy of SEPARATOR_SIDE pixels shows it and costs a quarter of the work.
    shrink = min(1.0, SEPARATOR_SIDE / max(image.shape[:2]))
    if shrink < 1.0:
        image = cv2.resize(image, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
        scale *= shrink
    height, width = image.shape[:2]
    long_edge = max(height, width)
    lab = cv2.cvtColor(cv2.GaussianBlur(image, (3, 3), 0), cv2.COLOR_BGR2LAB)
    edges = np.zeros((height, width), dtype=np.uint8)
    for channel in range(3):
        plane = lab[:, :, channel]
        found = cv2.Canny(plane, 30, 90) if channel == 0 else cv2.Canny(plane, 12, 36)
        across = np.abs(cv2.Sobel(plane, cv2.CV_16S, 1, 0, ksize=3))
        along = np.abs(cv2.Sobel(plane, cv2.CV_16S, 0, 1, ksize=3))
        found[across < 2 * along] = 0
        edges |= found
    del lab
    segments = cv2.HoughLinesP(
        edges, 1, np.pi / 360, threshold=max(20, int(0.03 * long_edge)),
        minLineLength=int(SEPARATOR_MIN_LENGTH * long_edge), maxLineGap=max(2, int(SEPARATOR_MAX_GAP * long_edge)))
    separators = []
    for x1, y1, x2, y2 in [] if segments is None else segments.reshape(-1, 4).tolist():
        if y1 > y2:
            x1, y1, x2, y2 = x2, y2, x1, y1
        if y2 == y1 or abs(x2 - x1) > SEPARATOR_MAX_LEAN * (y2 - y1):
            continue
        separators.append((float(x1), float(y1), float(x2), float(y2)))
    # Hough finds one edge as several nearly identical runs: the longest of those within two pixels is kept.
    separators.sort(key=lambda s: s[1] - s[3])
    kept = []
    for x1, y1, x2, y2 in separators:
        mid = (y1 + y2) / 2
        duplicate = False
        for k1, l1, k2, l2 in kept:
            if l1 - 2 <= mid <= l2 + 2:
                at = k1 + (k2 - k1) * (mid - l1) / max(l2 - l1, 1)
                if abs(at - (x1 + (x2 - x1) * (mid - y1) / max(y2 - y1, 1))) <= 2:
                    duplicate = True
                    break
        if not duplicate:
            kept.append((x1, y1, x2, y2))
    return [{"top": {"x": round(x1 / scale, 1), "y": round(y1 / scale, 1)},
             "bottom": {"x": round(x2 / scale, 1), "y": round(y2 / scale, 1)}} for x1, y1, x2, y2 in kept]


class Detector(TextDetector):
    """rapidocr's text detector with its input made in float32 in place (DetectorInput)."""

    def get_preprocess(self):
        return DetectorInput(self.limit_side_len, self.limit_type, self.mean, self.std)


class DetectorInput(DetPreProcess):
    """The detector's input as rapidocr makes it (resized to multiples of 32, (x / 255 - mean) / std, NCHW float32),
    written channel by channel into one float32 array: rapidocr's own goes through float64 copies of the whole image
    (about 70 MB more for a 1440x768 strip, held while the model runs)."""

    def __call__(self, img):
        resized = self.resize(img)
        if resized is None:
            return None
        height, width = resized.shape[:2]
        blob = np.empty((1, 3, height, width), dtype=np.float32)
        for channel in range(3):
            plane = blob[0, channel]
            np.multiply(resized[:, :, channel], np.float32(self.scale / self.std[channel]), out=plane)
            plane -= np.float32(self.mean[channel] / self.std[channel])
        return blob


# Strips overlap by this share of the scaled copy's width: more than a spine's text is wide, so each upright line is
# whole in the strip whose middle part holds its centre.
STRIP_OVERLAP = 0.1


def detect_in_strips(detector, image, strips):
    """The text boxes on `image` found strip by strip (side-by-side, overlapping), as if found on the whole. A box
    found whole in two strips (it lies in their overlap) is kept once, from the strip it lies most centrally in; a
    line cut by a strip's inner edge is joined with the piece of it that the neighbouring strip cut, or dropped
    where a neighbour holds it whole."""
    height, width = image.shape[:2]
    if strips <= 1:
        boxes = detector(image).boxes
        return [] if boxes is None else list(boxes)
    overlap = int(width * STRIP_OVERLAP)
    # Widths a multiple of 32 (the detector's stride), so strips are not resized.
    strip_width = min(width, -(-(width + (strips - 1) * overlap) // strips // 32) * 32)
    starts = [round(index * (width - strip_width) / (strips - 1)) for index in range(strips)]
    whole, pieces = [], []
    for index, start in enumerate(starts):
        end = start + strip_width
        found = detector(np.ascontiguousarray(image[:, start:end])).boxes
        # What the detector freed goes back before the next strip, so strips do not stack their leftovers.
        release_freed_memory()
        for box in [] if found is None else found:
            box = box + np.array([start, 0], dtype=np.float32)
            cut_left = index > 0 and box[:, 0].min() <= start + 2
            cut_right = index < strips - 1 and box[:, 0].max() >= end - 3
            if cut_left or cut_right:
                pieces.append((index, cut_left, cut_right, box))
            else:
                whole.append((abs(box[:, 0].mean() - (start + end) / 2), index, box))
    whole.sort(key=lambda item: item[0])
    # Each box against all those kept before it at once (numpy over their bounding rectangles): pair by pair in
    # Python this was ~15,000 comparisons a photo and a second of CPU.
    rectangles = np.array([bounding_rectangle(box) for _, _, box in whole]).reshape(-1, 4)
    strip_of = np.array([index for _, index, _ in whole])
    kept = []
    for position, (_, index, box) in enumerate(whole):
        others = np.array(kept, dtype=int)
        others = others[strip_of[others] != index]
        if not len(others) or shared_area_share(rectangles[position], rectangles[others]).max() < 0.5:
            kept.append(position)
    kept = [whole[position][2] for position in kept]
    return kept + join_pieces(pieces, kept)


def bounding_rectangle(box):
    return box[:, 0].min(), box[:, 1].min(), box[:, 0].max(), box[:, 1].max()


def shared_area_share(rectangle, others):
    """For each of `others` (bounding rectangles, one a row), the larger of the shares of its area and of
    `rectangle`'s area that the two share: area_share_inside both ways, over many boxes at once."""
    width = np.minimum(rectangle[2], others[:, 2]) - np.maximum(rectangle[0], others[:, 0])
    height = np.minimum(rectangle[3], others[:, 3]) - np.maximum(rectangle[1], others[:, 1])
    shared = np.maximum(width, 0.0) * np.maximum(height, 0.0)
    area = max((rectangle[2] - rectangle[0]) * (rectangle[3] - rectangle[1]), 1.0)
    other_areas = np.maximum((others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1]), 1.0)
    return np.maximum(shared / area, shared / other_areas)


def join_pieces(pieces, whole):
    """Lines cut by strip edges: a piece cut on its right joins the next strip's piece cut on its left that shares
    most of its height (chains across several strips join as one); a piece that does not join is dropped when most
    of it lies inside a box found whole, and kept otherwise."""
    parent = list(range(len(pieces)))

    def root(item):
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for left, (strip, _, cut_right, box) in enumerate(pieces):
        if not cut_right:
            continue
        for right, (other_strip, cut_left, _, other) in enumerate(pieces):
            if other_strip == strip + 1 and cut_left and vertical_share(box, other) >= 0.5:
                parent[root(right)] = root(left)
    groups = {}
    for item in range(len(pieces)):
        groups.setdefault(root(item), []).append(pieces[item][3])
    joined = []
    for boxes in groups.values():
        if len(boxes) == 1:
            if any(area_share_inside(boxes[0], box) >= 0.5 for box in whole):
                continue
            joined.append(boxes[0])
        else:
            corners = cv2.boxPoints(cv2.minAreaRect(np.concatenate(boxes).astype(np.float32)))
            joined.append(clockwise_from_top_left(corners))
    return joined


def vertical_share(first, second):
    """How much of the lower of two boxes' heights their vertical extents share."""
    top = max(first[:, 1].min(), second[:, 1].min())
    bottom = min(first[:, 1].max(), second[:, 1].max())
    shortest = min(np.ptp(first[:, 1]), np.ptp(second[:, 1]))
    return max(0.0, bottom - top) / max(shortest, 1.0)


def area_share_inside(piece, box):
    """The share of `piece`'s bounding rectangle that lies inside `box`'s bounding rectangle."""
    width = min(piece[:, 0].max(), box[:, 0].max()) - max(piece[:, 0].min(), box[:, 0].min())
    height = min(piece[:, 1].max(), box[:, 1].max()) - max(piece[:, 1].min(), box[:, 1].min())
    area = max(np.ptp(piece[:, 0]) * np.ptp(piece[:, 1]), 1.0)
    return max(0.0, width) * max(0.0, height) / area


def clockwise_from_top_left(corners):
    """Four corners ordered top-left, top-right, bottom-right, bottom-left (as the detector orders its boxes)."""
    by_x = corners[np.argsort(corners[:, 0])]
    left, right = by_x[:2], by_x[2:]
    top_left, bottom_left = left[np.argsort(left[:, 1])]
    top_right, bottom_right = right[np.argsort(right[:, 1])]
    return np.array([top_left, top_right, bottom_right, bottom_left], dtype=np.float32)


def release_freed_memory():
    """Hands freed memory back to the system (glibc keeps freed blocks for reuse otherwise, scattered over its
    arenas), so each strip's detection and the next photo start from the models' footprint, not from the leftovers
    of the step before."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def decode(data, longest=None):
    """The photo's pixels (BGR, EXIF orientation applied) and the whole photo's size as oriented. With `longest`, a
    JPEG larger than that may come reduced (libjpeg's 1/2, 1/4, 1/8 scales, never below `longest` on the long edge).
    PIL rather than cv2.imdecode: OpenCV returns the decoded part of a truncated JPEG as if it were whole, PIL says it
    is truncated."""
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
        # EXIF orientations 5-8 turn the photo a quarter: its width and height swap.
        turned = image.getexif().get(0x0112, 1) in (5, 6, 7, 8)
        size = (height, width) if turned else (width, height)
        if longest and image.format == "JPEG" and max(width, height) > longest:
            factor = max(width, height) / longest
            image.draft("RGB", (math.ceil(width / factor), math.ceil(height / factor)))
        image.load()
        image = ImageOps.exif_transpose(image)
        if image.mode != "RGB":
            image = image.convert("RGB")
    except Exception as error:
        raise InputError(
            f"the image could not be decoded ({len(data)} bytes, {width}x{height}): {error}") from None
    # One copy out of PIL, turned to BGR in place: at 12 MP each copy is 36 MB.
    pixels = np.array(image)
    del image
    return cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR, dst=pixels), size


def decode_again(data, size):
    """The whole photo, once `decode` has read it reduced: OpenCV decodes straight into one BGR array (PIL makes two
    48 MB copies of a 16 MP photo on the way), EXIF orientation applied as PIL applies it. `decode` already read
    every byte of the stream, so a truncated photo was refused there; a size that disagrees goes back to PIL."""
    image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None or (image.shape[1], image.shape[0]) != size:
        image, _ = decode(data)
    return image


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


class StagePeaks:
    """Each stage's peak resident memory and CPU seconds, for benchmarks: the kernel's high-water mark (VmHWM) read
    at the stage's end and then reset to the current resident size (writing 5 to /proc/self/clear_refs), so the next
    stage's peak is its own (recognize includes cutting the crops); the largest is the photo's peak. CPU seconds
    (all threads) measure the work where a loaded machine makes wall times say little."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.megabytes = {}
        self.cpu_seconds = {}
        self.cpu_mark = time.process_time()
        if enabled:
            self.reset()

    def end(self, stage):
        if not self.enabled:
            return
        now = time.process_time()
        self.cpu_seconds[stage] = round(now - self.cpu_mark, 3)
        self.cpu_mark = now
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    self.megabytes[stage] = round(int(line.split()[1]) / 1024, 1)
        self.reset()

    @staticmethod
    def reset():
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")


class InputError(Exception):
    pass


class SetupError(Exception):
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
    cv2.setNumThreads(arguments.threads or available_cores())
    started = time.perf_counter()
    try:
        reader = Reader(arguments)
    except SetupError as error:
        print(f"ocr worker: {error}", file=sys.stderr)
        return 2
    output = sys.stdout
    output.write(json.dumps({"ready": True, "seconds": round(time.perf_counter() - started, 3),
                             "models": reader.models}) + "\n")
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
