#!/usr/bin/env python3
"""Matching benchmark: the Library Dataset's annotated spine OCR texts matched against its catalogue by
`swiftwing-recognizer match`, beside the paper's fuzzy baseline (rapidfuzz token_set_ratio over title + author)
computed in the same run on the same rows.

Reports, for the catalogue with its call number tags removed (a home owner's) and with them, the share of matchable
spines whose right book comes first, on the development and held-out photo splits; the precision of matches with
confidence >= 0.8; and the cost per spine against the real catalogue and distractor catalogues of 150k and 1.5M
entries (real titles and authors recombined), with the index's size and build time.

    python3 Benchmarks/RecognizerBench/match-bench.py [--binary PATH] [--scales 15k,150k,1.5M] [--no-baseline]
"""
import argparse
import csv
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATASET = os.path.join(ROOT, "Fixtures", "library-dataset")


def photo_of(image_name):
    """The original photo of an annotated half (`…_0.jpg` top, `…_1.jpg` bottom): splits keep both halves together."""
    return re.sub(r"_[01]\.jpg$", "", image_name)


def split_of(image_name):
    """'dev' or 'test', by a hash of the photo's name: stable, and blind to content."""
    return "dev" if hashlib.sha256(photo_of(image_name).encode()).digest()[0] % 2 == 0 else "test"


def load():
    with open(os.path.join(DATASET, "annotations.csv"), newline="", encoding="utf-8") as f:
        annotations = list(csv.DictReader(f))
    with open(os.path.join(DATASET, "catalogue.csv"), newline="", encoding="utf-8") as f:
        catalogue = list(csv.DictReader(f))
    return annotations, catalogue


def matchable(row):
    return row["not_book"] == "False" and row["not_in_db"] == "False"


def truth(row):
    return (row["title"].strip(), row["author"].strip())


def write_catalogue(path, rows, with_tags):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["title", "author", "tag", "series", "isbn"])
        for row in rows:
            writer.writerow([row["title"], row["author"], row["tag"] if with_tags else "", row["series"], row["isbn"]])


def distractors(catalogue, count, seed):
    """`count` made-up entries: a real title with another real entry's author, tag and series."""
    rng = random.Random(seed)
    made = []
    for _ in range(count):
        a, b = rng.choice(catalogue), rng.choice(catalogue)
        made.append({"title": a["title"], "author": b["author"], "tag": b["tag"], "series": b["series"],
                     "isbn": "978%010d" % rng.randrange(10**10)})
    return made


def run_matcher(binary, catalogue_path, spines, ignore_tags, index_path, extra=()):
    """Runs `match` over all spines; returns its output lines and its --timing report (stderr)."""
    command = [binary, "match", "--catalogue", catalogue_path, "--json", "--timing", "--index", index_path]
    if ignore_tags:
        command.append("--ignore-tags")
    command += list(extra)
    text = "".join(json.dumps({"image": r["image_name"], "text": r["ocr"]}, ensure_ascii=False) + "\n" for r in spines)
    started = time.monotonic()
    done = subprocess.run(command, input=text.encode(), capture_output=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"match failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert len(lines) == len(spines), (len(lines), len(spines))
    timing = done.stderr.decode().strip().splitlines()[-1]
    ms = float(re.search(r"([0-9.]+) ms per spine", timing).group(1))
    opened = float(re.search(r"open ([0-9.]+) s", timing).group(1))
    return lines, ms, opened, wall


def evaluate(spines, outputs):
    """Top-1 accuracy on matchable spines per split, and the precision of confident (>= 0.8) matches."""
    figures = {}
    for split in ("dev", "test", "all"):
        rows = [(r, o) for r, o in zip(spines, outputs) if split == "all" or split_of(r["image_name"]) == split]
        scored = [(r, o) for r, o in rows if matchable(r)]
        with_truth = [(r, o) for r, o in scored if r["title"].strip()]
        right = sum(1 for r, o in with_truth if o["title"] is not None
                    and (o["title"].strip(), "; ".join(o["authors"]).strip()) == truth(r))
        confident = [(r, o) for r, o in rows if o["score"] is not None and o["score"] >= 0.8]
        confident_right = sum(1 for r, o in confident if matchable(r) and r["title"].strip()
                              and (o["title"].strip(), "; ".join(o["authors"]).strip()) == truth(r))
        figures[split] = {
            "matchable": len(scored), "with_truth": len(with_truth), "right": right,
            "top1": right / len(scored), "top1_annotated": right / len(with_truth),
            "confident": len(confident), "confident_right": confident_right,
            "precision_at_0.8": confident_right / len(confident) if confident else float("nan"),
            "recall_at_0.8": confident_right / len(with_truth),
        }
    return figures


def baseline(spines, catalogue):
    """The paper's fuzzy baseline: rapidfuzz token_set_ratio of the OCR text against title + author, best first."""
    from rapidfuzz import fuzz, process, utils
    choices = [utils.default_process(r["title"] + " " + r["author"]) for r in catalogue]
    keys = [truth(r) for r in catalogue]
    figures = {}
    started = time.monotonic()
    hits = {"dev": [0, 0, 0], "test": [0, 0, 0], "all": [0, 0, 0]}
    for r in spines:
        if not matchable(r):
            continue
        best = process.extractOne(utils.default_process(r["ocr"]), choices, scorer=fuzz.token_set_ratio,
                                  processor=None)
        right = r["title"].strip() and keys[best[2]] == truth(r)
        for split in (split_of(r["image_name"]), "all"):
            hits[split][0] += 1
            hits[split][1] += 1 if r["title"].strip() else 0
            hits[split][2] += 1 if right else 0
    elapsed = time.monotonic() - started
    for split, (count, annotated, right) in hits.items():
        figures[split] = {"top1": right / count, "top1_annotated": right / annotated}
    figures["ms_per_spine"] = 1000 * elapsed / hits["all"][0]
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "swiftwing-recognizer"))
    parser.add_argument("--scales", default="15k,150k,1.5M")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--work", default=None, help="folder for the catalogues and indexes (default: a temporary one)")
    args = parser.parse_args()

    annotations, catalogue = load()
    # Every annotated region of a photo goes in, as a real photo's spines would (books missing from the catalogue
    # and non-books too); only matchable ones are scored.
    spines = annotations
    work = args.work or tempfile.mkdtemp(prefix="match-bench-")
    os.makedirs(work, exist_ok=True)
    report = {"spines": len(spines), "matchable": sum(1 for r in spines if matchable(r))}

    for with_tags in (False, True):
        name = "tags" if with_tags else "no-tags"
        path = os.path.join(work, f"catalogue-{name}.csv")
        write_catalogue(path, catalogue, with_tags)
        index = path + ".index.sqlite"
        if os.path.exists(index):
            os.remove(index)
        outputs, ms, opened, _ = run_matcher(args.binary, path, spines, not with_tags, index)
        report[name] = {"ours": evaluate(spines, outputs), "ms_per_spine": ms, "index_build_s": opened,
                        "index_bytes": os.path.getsize(index)}
        _, ms_reused, opened_reused, _ = run_matcher(args.binary, path, spines[:200], not with_tags, index)
        report[name]["index_reopen_s"] = opened_reused
        print(f"{name}: {json.dumps(report[name])}", file=sys.stderr)

    if not args.no_baseline:
        report["baseline"] = baseline(spines, catalogue)
        print(f"baseline: {json.dumps(report['baseline'])}", file=sys.stderr)

    sizes = {"15k": 0, "150k": 150_000, "1.5M": 1_500_000}
    report["scale"] = {}
    for scale in args.scales.split(","):
        total = sizes[scale]
        rows = catalogue + (distractors(catalogue, total - len(catalogue), seed=19) if total else [])
        path = os.path.join(work, f"catalogue-{scale}.csv")
        write_catalogue(path, rows, with_tags=False)
        index = path + ".index.sqlite"
        if os.path.exists(index):
            os.remove(index)
        outputs, ms, opened, _ = run_matcher(args.binary, path, spines, True, index)
        figures = evaluate(spines, outputs)["all"]
        report["scale"][scale] = {"entries": len(rows), "ms_per_spine": ms, "index_build_s": opened,
                                  "index_bytes": os.path.getsize(index), "csv_bytes": os.path.getsize(path),
                                  "top1": figures["top1"], "precision_at_0.8": figures["precision_at_0.8"]}
        print(f"scale {scale}: {json.dumps(report['scale'][scale])}", file=sys.stderr)

    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
