"""The recognizer on a folder of annotated home-shelf photos (the home-shelves layout), against two catalogues: the
folder's Goodreads-layout catalogue, and an owner's catalogue (the annotated books plus 1,000 others drawn from it
with a fixed seed). Optionally the same for a baseline recognizer (another build and another worker), in one run.

Usage (run with the worker's interpreter, .ocr-venv/bin/python3; bench.sh --data DIR runs it; a --baseline-worker
folder that is a virtual environment, DIR/bin/python3 with DIR/ocr_worker.py, runs with its own interpreter):
  shelf-bench.py --data DIR --recognizer BIN [--worker DIR] [--baseline-recognizer BIN --baseline-worker DIR]
                 [--work DIR] [--detail] [--ocr-from DIR] [-- WORKER OPTION...]
DIR holds photos/*.jpg, annotations.csv (image,title,author,notes,in_goodbooks,catalogue_book_id) and
catalogue-goodreads.csv (a Goodreads export: Book Id, Title, Author, ...).

Each recognizer's OCR worker reads every photo as it is (the first one twice: its first read warms the worker and is
not counted), with per-stage seconds and peak resident memory; then `read --ocr-from` groups and matches those
lines against each catalogue (its seconds are the grouping and matching stage). A reported book is right when its
catalogue row's Book Id is one annotated on that photo and not yet found there (copies counted).
Figures per recognizer and catalogue: recall (annotated books found), confident (>= 0.8) and right as a share of the
annotated books, confident and wrong as a share of the confident reports (and as a count). The current recognizer
is also run with no catalogue at all (the shipped open one, goodbooks-10k): its recall is of the annotated books
that catalogue holds (`in_goodbooks`).
"""
import argparse
import csv
import io
import json
import os
import random
import resource
import struct
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter, defaultdict

OWNER_OTHERS = 1000
OWNER_SEED = 32


def fold(text):
    text = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in text if not unicodedata.combining(c)).lower().split())


def owner_catalogue(source, annotated_ids, path):
    """The annotated books' rows and OWNER_OTHERS others (random.Random(OWNER_SEED)), in the source's layout."""
    with open(source, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = list(reader)
    column = header.index("Book Id")
    own = [row for row in rows if row[column] in annotated_ids]
    others = [row for row in rows if row[column] not in annotated_ids]
    chosen = own + random.Random(OWNER_SEED).sample(others, OWNER_OTHERS)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(chosen)
    return len(chosen)


def worker_python(worker_dir):
    """The interpreter for the worker in `worker_dir`: the virtual environment's own when the folder is one (a copy of
    an older environment with its ocr_worker.py beside it, e.g. the PP-OCRv4 one), else this interpreter."""
    own = os.path.join(worker_dir, "bin", "python3")
    return own if os.path.isfile(own) else sys.executable


def run_worker(worker_dir, photos, options, save_dir):
    """Reads each photo with the worker in `worker_dir`; saves `read --ocr-from` files; returns per-photo timings."""
    os.makedirs(save_dir, exist_ok=True)
    process = subprocess.Popen(
        [worker_python(worker_dir), "-B", os.path.join(worker_dir, "ocr_worker.py"), "--stage-memory"] + options,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ready = json.loads(process.stdout.readline())
    timings = {}
    for index, photo in enumerate([photos[0]] + photos):
        data = open(photo, "rb").read()
        process.stdin.write(struct.pack(">I", len(data)) + data)
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        if "error" in reply:
            raise SystemExit(f"shelf-bench: the worker could not read {photo}: {reply['error']}")
        if index == 0:
            continue
        name = os.path.splitext(os.path.basename(photo))[0]
        saved = {key: reply[key] for key in ("width", "height", "lines")}
        for key in ("separators",):
            if key in reply:
                saved[key] = reply[key]
        with open(os.path.join(save_dir, name + ".json"), "w", encoding="utf-8") as handle:
            json.dump(saved, handle, ensure_ascii=False)
        timings[name] = {"seconds": reply["seconds"], "peakMB": max(reply["peakMB"].values()),
                         "cpu": reply["seconds"]["cpu"], "megapixels": reply["width"] * reply["height"] / 1e6,
                         "lines": len(reply["lines"])}
    process.stdin.close()
    process.wait()
    return ready, timings


def run_read(recognizer, catalogue, ocr_dir, photos, extra):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    output = subprocess.run(
        [recognizer, "read"] + (["--catalogue", catalogue] if catalogue else []) + ["--json", "--timings",
                                                                                     "--ocr-from", ocr_dir]
        + extra + photos,
        check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return json.loads(output), wall, max(peak, before) / 1024


def score(result, annotations, ids_by_title, detail):
    totals = Counter()
    lines = []
    for image in result["images"]:
        name = os.path.basename(image["file"])
        expected = Counter(row["catalogue_book_id"] for row in annotations if row["image"] == name)
        remaining = expected.copy()
        listed = []
        for book in image["books"]:
            candidates = ids_by_title.get(fold(book["title"]), set())
            hit = next((book_id for book_id in candidates if remaining[book_id] > 0), None)
            right = hit is not None
            if right:
                remaining[hit] -= 1
            confident = book["confidence"] >= 0.8
            totals.update(found=right, confident=confident, confident_right=confident and right,
                          confident_wrong=confident and not right, reported=1)
            listed.append((book["boundingBox"]["x"], "OK" if right else "XX",
                           f'{book["text"][:70]} -> {book["title"][:50]} ({book["confidence"]:.2f})'))
        totals.update(annotated=sum(expected.values()))
        if detail:
            for spine in image.get("unmatched", []):
                listed.append((spine["boundingBox"]["x"], "  ", spine["text"][:90]))
            lines.append(f"  {name}:")
            lines += [f"    {verdict} x={x:.3f} {text}" for x, verdict, text in sorted(listed)]
            titles = {row["catalogue_book_id"]: row["title"] for row in annotations if row["image"] == name}
            lines += [f"    missed: {titles[book_id]}" for book_id, count in remaining.items() if count > 0]
    annotated = max(totals["annotated"], 1)
    figures = {
        "annotated": totals["annotated"], "found": totals["found"], "recall": round(totals["found"] / annotated, 3),
        "confident": totals["confident"], "confident_right": totals["confident_right"],
        "confident_right_share": round(totals["confident_right"] / annotated, 3),
        "confident_wrong": totals["confident_wrong"],
        "confident_wrong_share": round(totals["confident_wrong"] / totals["confident"], 3) if totals["confident"] else 0,
        "reported": totals["reported"]}
    return figures, lines


def effort(result, annotations, ids_by_title):
    """The owner's effort per annotated book, with the spines `read --candidates` reports: lands right with no tap
    (its spine's match is right and >= 0.8, what `serve` reports as a book), one tap (the right book is among the
    candidates of a spine of that photo not already taken by a book landed), or a search. Each spine resolves one
    book. Wrong books stored with no review flag: spine matches >= 0.8 that are wrong."""
    totals = Counter()
    for image in result["images"]:
        name = os.path.basename(image["file"])
        remaining = Counter(row["catalogue_book_id"] for row in annotations if row["image"] == name)
        totals.update(annotated=sum(remaining.values()))
        open_spines = []
        for spine in image.get("spines", []):
            if spine.get("match") is not None and spine.get("confidence", 0) >= 0.8:
                hit = next((i for i in ids_by_title.get(fold(spine["match"]), set()) if remaining[i] > 0), None)
                if hit is not None:
                    remaining[hit] -= 1
                    totals.update(no_tap=1)
                else:
                    totals.update(wrong_unflagged=1)
            else:
                open_spines.append(spine)
        for spine in open_spines:
            for candidate in spine["candidates"]:
                hit = next((i for i in ids_by_title.get(fold(candidate["title"]), set()) if remaining[i] > 0), None)
                if hit is not None:
                    remaining[hit] -= 1
                    totals.update(one_tap=1)
                    break
    annotated = max(totals["annotated"], 1)
    return {"no_tap": round(totals["no_tap"] / annotated, 3), "one_tap": round(totals["one_tap"] / annotated, 3),
            "within_one_tap": round((totals["no_tap"] + totals["one_tap"]) / annotated, 3),
            "search": round(1 - (totals["no_tap"] + totals["one_tap"]) / annotated, 3),
            "wrong_unflagged": totals["wrong_unflagged"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--recognizer", required=True)
    parser.add_argument("--worker", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "Sources/swiftwing-recognizer-ocr"))
    parser.add_argument("--baseline-recognizer")
    parser.add_argument("--baseline-worker")
    parser.add_argument("--work")
    parser.add_argument("--detail", action="store_true")
    parser.add_argument("--ocr-from", help="take the current recognizer's lines from here (no worker run, no timings)")
    parser.add_argument("--read-option", action="append", default=[], help="an extra option for read")
    parser.add_argument("worker_options", nargs="*")
    arguments = parser.parse_args()

    data = os.path.abspath(arguments.data)
    for needed in ("photos", "annotations.csv", "catalogue-goodreads.csv"):
        if not os.path.exists(os.path.join(data, needed)):
            raise SystemExit(f"shelf-bench: {data} has no {needed}: give a folder in the home-shelves layout "
                             "(photos/*.jpg, annotations.csv, catalogue-goodreads.csv)")
    work = arguments.work or tempfile.mkdtemp(prefix="shelf-bench.")
    os.makedirs(work, exist_ok=True)
    photos = sorted(os.path.join(data, "photos", name) for name in os.listdir(os.path.join(data, "photos"))
                    if name.lower().endswith((".jpg", ".jpeg", ".png")))
    annotations = list(csv.DictReader(open(os.path.join(data, "annotations.csv"), encoding="utf-8")))
    # The catalogue is copied: the recognizer keeps its index beside the catalogue file.
    goodreads = os.path.join(work, "catalogue-goodreads.csv")
    with open(os.path.join(data, "catalogue-goodreads.csv"), "rb") as source, open(goodreads, "wb") as copy:
        copy.write(source.read())
    owner = os.path.join(work, "catalogue-owner.csv")
    owner_size = owner_catalogue(goodreads, {row["catalogue_book_id"] for row in annotations}, owner)
    ids_by_title = defaultdict(set)
    for row in csv.DictReader(open(goodreads, encoding="utf-8")):
        ids_by_title[fold(row["Title"])].add(row["Book Id"])

    recognizers = [("current", arguments.recognizer, arguments.worker)]
    if arguments.baseline_recognizer:
        recognizers.insert(0, ("baseline", arguments.baseline_recognizer, arguments.baseline_worker))
    print(f"shelf-bench: {len(photos)} photos, {len(annotations)} annotated spines; catalogues: Goodreads "
          f"(its rows), owner's ({owner_size} rows, seed {OWNER_SEED}); load average {os.getloadavg()}")
    report = {}
    for label, recognizer, worker in recognizers:
        ocr_dir = os.path.join(work, f"ocr-{label}")
        if label == "current" and arguments.ocr_from:
            ocr_dir, timings = arguments.ocr_from, {}
        else:
            # Each worker at its own default detection size (PP-OCRv4's 1920, PP-OCRv6's 1600) unless options say.
            ready, timings = run_worker(worker, photos, arguments.worker_options, ocr_dir)
            print(f"{label}: worker ready in {ready['seconds']} s")
        for name, timing in timings.items():
            stages = " ".join(f"{stage} {value:.2f}" for stage, value in timing["seconds"].items()
                              if stage not in ("total", "cpu"))
            print(f"  {name}: {timing['megapixels']:.1f} MP, {timing['lines']} lines, {timing['seconds']['total']:.2f}"
                  f" s wall ({stages}), {timing['cpu']:.2f} s CPU, peak {timing['peakMB']:.0f} MB")
        if timings:
            twelve = [t for t in timings.values() if t["megapixels"] >= 11]
            print(f"  worker: mean {sum(t['seconds']['total'] for t in timings.values()) / len(timings):.2f} s wall, "
                  f"12 MP photos {sum(t['seconds']['total'] for t in twelve) / max(len(twelve), 1):.2f} s wall "
                  f"{sum(t['cpu'] for t in twelve) / max(len(twelve), 1):.2f} s CPU, "
                  f"peak {max(t['peakMB'] for t in timings.values()):.0f} MB")
        catalogues = [("goodreads", goodreads), ("owner", owner)]
        if label == "current":
            # No catalogue of the owner's: the shipped open one alone (an older recognizer needs --catalogue).
            catalogues.append(("open", None))
        for catalogue_label, catalogue in catalogues:
            # The current recognizer also lists every spine with the five candidates `serve` offers in review.
            extra = arguments.read_option + (["--candidates", "5"] if label == "current" else [])
            result, wall, peak = run_read(recognizer, catalogue, ocr_dir, photos, extra)
            group_match = [image.get("seconds") or 0 for image in result["images"]]
            figures, lines = score(result, annotations, ids_by_title, arguments.detail)
            if label == "current":
                figures["effort"] = effort(result, annotations, ids_by_title)
            if catalogue is None:
                # Only the books the open catalogue holds can be found: recall is of those.
                held = sum(1 for row in annotations if row["in_goodbooks"] == "true")
                figures["held"] = held
                figures["recall_of_held"] = round(figures["found"] / max(held, 1), 3)
            figures["group_match_seconds_mean"] = round(sum(group_match) / len(group_match), 3)
            figures["read_peak_MB"] = round(peak)
            report[(label, catalogue_label)] = figures
            print(f"  {label} / {catalogue_label}: {json.dumps(figures)}")
            for line in lines:
                print(line)
    print(json.dumps({f"{a}/{b}": figures for (a, b), figures in report.items()}))


if __name__ == "__main__":
    main()
