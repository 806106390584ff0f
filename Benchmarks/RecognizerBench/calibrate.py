#!/usr/bin/env python3
"""Fits the matcher's confidence calibration (`ConfidenceCalibration` in Sources/Recognition/Matching.swift) on this
recognizer's own output, and says how it does on photos it was not fitted on (cross-validation by photo).

The matches it learns from, each with the evidence `--explain` writes and whether it was right:
  home      the recognizer's own OCR lines of a home-shelves folder (saved by shelf-bench.py --work or
            `read --save-ocr`), grouped and matched by `read --ocr-from --explain` against the folder's Goodreads
            catalogue and an owner's (its annotated books and 1,000 others, as shelf-bench.py makes it), each with
            the shipped open catalogue after it as `read` has it, and against the open catalogue alone (no
            catalogue of the owner's: most of these books are not in it, so what it matches is mostly wrong);
  library   the repository's two Library Dataset shelf photos read by the OCR worker (Fixtures/shelves; only the
            annotated half of each counts), against the Library Dataset catalogue and the open catalogue alone;
  spines    the Library Dataset's annotated spines (Fixtures/library-dataset, the dataset's own OCR text) through
            `match --explain`, catalogue with and without call numbers.
Groups are photos (the two framings of one shelf, cv-book-svg-1 and -2, are one group); each group falls in one of
K folds by a hash of its name. For each fold a logistic curve (Newton's method, ridge 1e-3, home and library matches
weighted to the same total) is fitted on the other folds and scores the fold's matches; the figures below are those held-out
scores, never a fit's own data. The constants printed at the end are the fit on everything.

Usage (the worker's interpreter has numpy):
  .ocr-venv/bin/python3 Benchmarks/RecognizerBench/calibrate.py --recognizer BIN --data HOME_DIR --ocr-from DIR
      [--library-ocr DIR] [--folds 6] [--work DIR] [--current] [--reuse]
"""
import argparse
import csv
import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_module(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shelf_bench = load_module("shelf_bench", "shelf-bench.py")
match_bench = load_module("match_bench", "match-bench.py")
FEATURES = match_bench.FEATURES
evidence_vector = match_bench.evidence_vector


def group_of(name):
    base = os.path.splitext(os.path.basename(name))[0]
    return "cv-book-svg" if base.startswith("cv-book-svg") else base


def fold_of(group, folds):
    return hashlib.sha256(group.encode()).digest()[0] % folds


def read_explained(recognizer, catalogue, ocr_dir, photos, open_catalogue=True):
    """`read --explain` of saved lines against `catalogue` (None: the shipped open catalogue alone), and the open
    catalogue after it unless `open_catalogue` is false."""
    command = [recognizer, "read", "--json", "--explain", "--ocr-from", ocr_dir] + photos
    if catalogue:
        command += ["--catalogue", catalogue] + ([] if open_catalogue else ["--no-open-catalogue"])
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def home_matches(recognizer, data, ocr_dir, work):
    """(source, group, vector, right) for every book `read` reports on the home photos, both catalogues."""
    photos = sorted(os.path.join(data, "photos", n) for n in os.listdir(os.path.join(data, "photos"))
                    if n.lower().endswith((".jpg", ".jpeg", ".png")))
    annotations = list(csv.DictReader(open(os.path.join(data, "annotations.csv"), encoding="utf-8")))
    goodreads = os.path.join(work, "catalogue-goodreads.csv")
    if not os.path.exists(goodreads):
        with open(os.path.join(data, "catalogue-goodreads.csv"), "rb") as source, open(goodreads, "wb") as copy:
            copy.write(source.read())
    owner = os.path.join(work, "catalogue-owner.csv")
    if not os.path.exists(owner):
        shelf_bench.owner_catalogue(goodreads, {row["catalogue_book_id"] for row in annotations}, owner)
    ids_by_title = defaultdict(set)
    for row in csv.DictReader(open(goodreads, encoding="utf-8")):
        ids_by_title[shelf_bench.fold(row["Title"])].add(row["Book Id"])
    matches, annotated = [], Counter()
    for label, catalogue in (("home-goodreads", goodreads), ("home-owner", owner), ("home-open", None)):
        result = read_explained(recognizer, catalogue, ocr_dir, photos)
        for image in result["images"]:
            name = os.path.basename(image["file"])
            expected = Counter(row["catalogue_book_id"] for row in annotations if row["image"] == name)
            annotated[label] += sum(expected.values())
            remaining = expected.copy()
            for book in image["books"]:
                hit = next((i for i in ids_by_title.get(shelf_bench.fold(book["title"]), set()) if remaining[i] > 0),
                           None)
                if hit is not None:
                    remaining[hit] -= 1
                matches.append((label, group_of(name), evidence_vector(book["evidence"]), hit is not None))
    return matches, annotated


# The annotated half of each repository shelf photo (Fixtures/shelves/README.md): the image name's stem in the
# Library Dataset, and which half (0 top, 1 bottom) its annotations cover.
LIBRARY_PHOTOS = {"one_shelf.jpg": ("20221128_101635", 0), "two_shelves.jpg": ("20221128_100245", 1)}


def library_matches(recognizer, ocr_dir, work):
    annotations, catalogue = match_bench.load()
    path = os.path.join(work, "catalogue-library.csv")
    if not os.path.exists(path):
        match_bench.write_catalogue(path, catalogue, True)
    photos = [os.path.join(ROOT, "Fixtures", "shelves", name) for name in LIBRARY_PHOTOS]
    matches, annotated = [], Counter()
    # The library's own catalogue, and the open catalogue alone (a library's Spanish and Catalan shelves it does
    # not hold: what a new owner's unlisted books look like to it).
    for label, catalogue in (("library", path), ("library-open", None)):
        more, count = library_read(recognizer, catalogue, ocr_dir, photos, annotations, label)
        matches += more
        annotated[label] += count
    return matches, annotated


def library_read(recognizer, catalogue, ocr_dir, photos, annotations, label):
    result = read_explained(recognizer, catalogue, ocr_dir, photos, open_catalogue=False)
    matches, annotated = [], 0
    for image in result["images"]:
        stem, half = LIBRARY_PHOTOS[os.path.basename(image["file"])]
        rows = [r for r in annotations if r["image_name"] == f"{stem}_{half}.jpg" and match_bench.matchable(r)]
        annotated += len(rows)
        remaining = Counter(match_bench.truth(r) for r in rows)
        for book in image["books"]:
            centre = book["boundingBox"]["y"] + book["boundingBox"]["height"] / 2
            if (centre >= 0.5) != (half == 1):
                continue  # on the half nobody annotated: neither right nor wrong is known
            key = (book["title"].strip(), "; ".join(book["authors"]).strip())
            right = remaining[key] > 0
            if right:
                remaining[key] -= 1
            matches.append((label, stem, evidence_vector(book["evidence"]), right))
    return matches, annotated


def spine_matches(recognizer, work):
    annotations, catalogue = match_bench.load()
    matches, annotated = [], Counter()
    for with_tags in (False, True):
        label = "spines-tags" if with_tags else "spines-no-tags"
        path = os.path.join(work, f"catalogue-{label}.csv")
        if not os.path.exists(path):
            match_bench.write_catalogue(path, catalogue, with_tags)
        outputs, _, _, _ = match_bench.run_matcher(recognizer, path, annotations, not with_tags,
                                                   path + ".index.sqlite", ["--explain"])
        annotated[label] = sum(1 for r in annotations if match_bench.matchable(r) and r["title"].strip())
        for row, output in zip(annotations, outputs):
            if output["title"]:
                matches.append((label, match_bench.photo_of(row["image_name"]), evidence_vector(output["evidence"]),
                                match_bench.is_right(row, output)))
    return matches, annotated


def family(source):
    """Home shelves (own OCR, no call numbers) or the library (labels, and mostly the dataset's OCR text)."""
    return "home" if source.startswith("home") else "library"


def fit(matches, l2=1e-3, rounds=60):
    """Weights (bias first) of a logistic regression, the home and the library matches weighted to the same total
    (there are 20 times more library ones), each match alike within its family."""
    import numpy as np
    per_family = Counter(family(source) for source, _, _, _ in matches)
    x = np.array([[1.0] + vector for _, _, vector, _ in matches])
    y = np.array([1.0 if right else 0.0 for _, _, _, right in matches])
    s = np.array([len(matches) / (len(per_family) * per_family[family(source)]) for source, _, _, _ in matches])
    w = np.zeros(x.shape[1])
    ridge = l2 * np.diag(np.r_[0, np.ones(len(w) - 1)])
    for _ in range(rounds):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (s * (p - y)) + ridge @ w
        hessian = x.T @ (x * (s * p * (1 - p))[:, None]) + ridge
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return [float(v) for v in w]


def confidence(weights, vector):
    z = weights[0] + sum(w * v for w, v in zip(weights[1:], vector))
    return 1 / (1 + math.exp(-max(-50.0, min(50.0, z))))


def figures(scored, annotated):
    """Per source: reported, right, confident (>= 0.8), confident-right as a share of the annotated books,
    confident-wrong (count, and share of the confident)."""
    table = {}
    for source in sorted({source for source, _, _ in scored}):
        rows = [(c, right) for s, c, right in scored if s == source]
        confident = [right for c, right in rows if c >= 0.8]
        table[source] = {
            "annotated": annotated[source], "reported": len(rows), "right": sum(right for _, right in rows),
            "confident": len(confident), "confident_right": sum(confident),
            "confident_right_share": round(sum(confident) / max(1, annotated[source]), 3),
            "confident_wrong": len(confident) - sum(confident),
            "confident_wrong_share": round((len(confident) - sum(confident)) / max(1, len(confident)), 3),
        }
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recognizer", required=True)
    parser.add_argument("--data", required=True, help="a home-shelves folder")
    parser.add_argument("--ocr-from", required=True, help="the recognizer's saved lines of the home photos")
    parser.add_argument("--library-ocr", help="the recognizer's saved lines of Fixtures/shelves' two photos")
    parser.add_argument("--folds", type=int, default=6)
    parser.add_argument("--work")
    parser.add_argument("--current", action="store_true", help="also score the calibration the build has now")
    parser.add_argument("--reuse", action="store_true",
                        help="take the matches collected by an earlier run with the same --work (no recognizer run)")
    arguments = parser.parse_args()
    work = arguments.work or tempfile.mkdtemp(prefix="calibrate.")
    os.makedirs(work, exist_ok=True)

    def collected(name, collect):
        """One source's matches, collected again unless --reuse finds them saved in --work."""
        saved = os.path.join(work, f"matches-{name}.json")
        if arguments.reuse and os.path.exists(saved):
            with open(saved, encoding="utf-8") as handle:
                kept = json.load(handle)
            return [tuple(m) for m in kept["matches"]], Counter(kept["annotated"])
        found, counts = collect()
        with open(saved, "w", encoding="utf-8") as handle:
            json.dump({"matches": found, "annotated": counts}, handle)
        return found, counts

    matches, annotated = collected("home", lambda: home_matches(
        arguments.recognizer, os.path.abspath(arguments.data), os.path.abspath(arguments.ocr_from), work))
    if arguments.library_ocr:
        more, counts = collected("library", lambda: library_matches(
            arguments.recognizer, os.path.abspath(arguments.library_ocr), work))
        matches += more
        annotated.update(counts)
    more, counts = collected("spines", lambda: spine_matches(arguments.recognizer, work))
    matches += more
    annotated.update(counts)
    print(f"calibrate: {len(matches)} matches from {len({(s, g) for s, g, _, _ in matches})} photos; "
          f"{dict(Counter(s for s, _, _, _ in matches))}", file=sys.stderr)

    held_out = []
    for fold in range(arguments.folds):
        train = [m for m in matches if fold_of(m[1], arguments.folds) != fold]
        test = [m for m in matches if fold_of(m[1], arguments.folds) == fold]
        if not test:
            continue
        weights = fit(train)
        held_out += [(source, confidence(weights, vector), right) for source, _, vector, right in test]
    report = {"cross_validated": figures(held_out, annotated)}
    if arguments.current:
        # What the build's own confidences give on the same matches (no fitting: nothing to hold out).
        current = load_current()
        report["current"] = figures([(s, confidence(current, v), r) for s, _, v, r in matches], annotated)
    weights = fit(matches)
    report["weights"] = dict(zip(["bias"] + FEATURES, [round(w, 3) for w in weights]))
    print(json.dumps(report, indent=1))
    print("ConfidenceCalibration, fitted on every fold:", file=sys.stderr)
    for feature, weight in zip(["bias"] + FEATURES, weights):
        print(f"    public var {feature}: Double = {weight:.3f}", file=sys.stderr)


def load_current():
    """The weights in Sources/Recognition/Matching.swift's ConfidenceCalibration, in FEATURES order."""
    import re
    text = open(os.path.join(ROOT, "Sources", "Recognition", "Matching.swift"), encoding="utf-8").read()
    body = text[text.index("public struct ConfidenceCalibration"):]
    values = dict(re.findall(r"public var (\w+): Double = (-?[0-9.]+)", body[:body.index("public init")]))
    return [float(values[name]) for name in ["bias"] + FEATURES]


if __name__ == "__main__":
    main()
