#!/usr/bin/env python3
"""Matching benchmark: the Library Dataset's annotated spine OCR texts matched against its catalogue by
`swiftwing-recognizer match`, beside the paper's fuzzy baseline (rapidfuzz token_set_ratio over title + author)
computed in the same run on the same rows.

Reports, for the catalogue with its call number tags removed (a home owner's) and with them, the share of matchable
spines whose right book comes first, on the development and held-out photo splits; the precision of matches with
confidence >= 0.8; and the cost per spine against the real catalogue and distractor catalogues of 150k and 1.5M
entries (real titles and authors recombined), with the index's size and build time.

    python3 Benchmarks/RecognizerBench/match-bench.py [--binary PATH] [--scales 15k,150k,1.5M] [--no-baseline]
        [--fit] [--failures N]

`--fit` fits the confidence calibration (a logistic curve over the matcher's evidence, which `match --explain`
writes) on the development photos only, and prints it as Swift constants for `ConfidenceCalibration`; the held-out
figures then say how it does on photos it never saw. `--failures N` prints N wrong development matches with the
right book's place among the candidates (absent: the trigram retrieval missed it).
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
    """`count` made-up entries recombined from real ones: half keep a real title, half splice the first words of one
    real title onto the last words of another; each takes a third real entry's author, tag and series. So the
    words, names and trigrams are the real catalogue's, many titles recur under other authors, and the right book's
    own title is never enough on its own."""
    rng = random.Random(seed)
    made = []
    for _ in range(count):
        a, b, c = rng.choice(catalogue), rng.choice(catalogue), rng.choice(catalogue)
        title = a["title"].strip()
        if rng.random() < 0.5:
            head, tail = title.split(), b["title"].split()
            title = " ".join(head[:rng.randint(1, len(head))] + tail[rng.randint(0, len(tail) - 1):])
        made.append({"title": title, "author": c["author"], "tag": c["tag"], "series": c["series"],
                     "isbn": "978%010d" % rng.randrange(10**10)})
    return made


def run_matcher(binary, catalogue_path, spines, ignore_tags, index_path, extra=()):
    """Runs `match` over all spines; returns its output lines and its --timing report (stderr): mean, median and
    95th percentile milliseconds per spine, and the seconds the index took to open (or build)."""
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
    ms = {"mean": float(re.search(r"([0-9.]+) ms per spine", timing).group(1)),
          "median": float(re.search(r"median ([0-9.]+) ms", timing).group(1)),
          "p95": float(re.search(r"p95 ([0-9.]+) ms", timing).group(1))}
    opened = float(re.search(r"open ([0-9.]+) s", timing).group(1))
    return lines, ms, opened, wall


def is_right(row, output):
    return (matchable(row) and row["title"].strip() != "" and output["title"] is not None
            and (output["title"].strip(), "; ".join(output["authors"]).strip()) == truth(row))


# The evidence the confidence is fitted on, in the order of `ConfidenceCalibration`'s weights.
FEATURES = ["score", "lead", "ownBest", "shortSpine", "title", "titleInformation", "surname", "explained", "tag",
            "authorMark"]


def evidence_vector(evidence):
    features = evidence["features"]
    return [
        evidence["score"], evidence["lead"], 1.0 if evidence["rank"] == 0 else 0.0,
        max(0.0, 1 - evidence["spineLetters"] / 20), features["title"], features["titleInformation"],
        features["surname"], features["explained"], features["tag"], features.get("authorMark", 0),
    ]


def fit_logistic(xs, ys, l2=1e-3, rounds=50):
    """Weights (bias first) of a logistic regression by Newton's method, with a small ridge so it converges when
    the classes separate."""
    import numpy as np
    x = np.hstack([np.ones((len(xs), 1)), np.array(xs)])
    y = np.array(ys, dtype=float)
    w = np.zeros(x.shape[1])
    for _ in range(rounds):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + l2 * np.r_[0, w[1:]]
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + l2 * np.diag(np.r_[0, np.ones(len(w) - 1)])
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return [float(v) for v in w]


def apply_logistic(weights, vector):
    import math
    z = weights[0] + sum(w * v for w, v in zip(weights[1:], vector))
    return 1 / (1 + math.exp(-z))


def calibration_figures(spines, outputs, confidence):
    """Per split: precision of matches whose confidence is >= 0.8, and coverage (the share of right matches that
    reach 0.8)."""
    figures = {}
    for split in ("dev", "test"):
        rows = [(r, o) for r, o in zip(spines, outputs) if split_of(r["image_name"]) == split and o["title"]]
        right = [is_right(r, o) for r, o in rows]
        sure = [(ok, confidence(o)) for (r, o), ok in zip(rows, right) if confidence(o) >= 0.8]
        figures[split] = {
            "confident": len(sure), "confident_right": sum(ok for ok, _ in sure),
            "precision_at_0.8": sum(ok for ok, _ in sure) / len(sure) if sure else float("nan"),
            "coverage_at_0.8": sum(ok for ok, _ in sure) / max(1, sum(right)),
        }
    return figures


def print_failures(spines, outputs, count):
    """The first `count` wrong development matches of matchable spines, with where the right book ranked."""
    shown = 0
    for r, o in zip(spines, outputs):
        if shown >= count or split_of(r["image_name"]) != "dev" or not matchable(r) or not r["title"].strip():
            continue
        if is_right(r, o):
            continue
        shown += 1
        place = next((i for i, c in enumerate(o.get("candidates", []))
                      if (c["title"].strip(), "; ".join(c["authors"]).strip()) == truth(r)), None)
        got = f"{o['title']!r} / {o['authors']}" if o["title"] else "nothing"
        best = o["candidates"][0]["score"] if o.get("candidates") else None
        right_score = o["candidates"][place]["score"] if place is not None else None
        print(f"  {r['image_name']} ocr={r['ocr']!r}\n    want {r['title'].strip()!r} / {r['author']!r}"
              f" (candidate {place}, score {right_score}; best {best})\n    got  {got} score {o['score']}",
              file=sys.stderr)


def classify_misses(spines, outputs):
    """Per split, why matchable annotated spines went wrong: the right book never among the retrieved candidates
    (`retrieval`), retrieved but not the spine's own best (`outranked`), or the spine's best but the assignment gave
    the spine another entry or none (`assignment`). Needs `--explain` output."""
    counts = {}
    for r, o in zip(spines, outputs):
        if not matchable(r) or not r["title"].strip() or is_right(r, o):
            continue
        candidates = o.get("candidates") or []
        place = next((i for i, c in enumerate(candidates)
                      if (c["title"].strip(), "; ".join(c["authors"]).strip()) == truth(r)), None)
        kind = "retrieval" if place is None else "outranked" if candidates[0]["score"] > candidates[place]["score"] \
            else "assignment"
        for split in (split_of(r["image_name"]), "all"):
            counts.setdefault(split, {"retrieval": 0, "outranked": 0, "assignment": 0})[kind] += 1
    return counts


def evaluate(spines, outputs):
    """Top-1 accuracy on matchable spines per split, and the precision of confident (>= 0.8) matches."""
    figures = {}
    for split in ("dev", "test", "all"):
        rows = [(r, o) for r, o in zip(spines, outputs) if split == "all" or split_of(r["image_name"]) == split]
        scored = [(r, o) for r, o in rows if matchable(r)]
        if not scored:
            continue
        with_truth = [(r, o) for r, o in scored if r["title"].strip()]
        right = sum(1 for r, o in with_truth if is_right(r, o))
        confident = [(r, o) for r, o in rows if o["score"] is not None and o["score"] >= 0.8]
        confident_right = sum(1 for r, o in confident if is_right(r, o))
        figures[split] = {
            "matchable": len(scored), "with_truth": len(with_truth), "right": right,
            "top1": right / len(scored), "top1_annotated": right / len(with_truth),
            "confident": len(confident), "confident_right": confident_right,
            "precision_at_0.8": confident_right / len(confident) if confident else float("nan"),
            "recall_at_0.8": confident_right / len(with_truth),
            "coverage_at_0.8": confident_right / max(1, right),
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
    parser.add_argument("--fit", action="store_true", help="fit the confidence calibration on the development half")
    parser.add_argument("--failures", type=int, default=0, help="print this many wrong development matches")
    args = parser.parse_args()

    annotations, catalogue = load()
    # Every annotated region of a photo goes in, as a real photo's spines would (books missing from the catalogue
    # and non-books too); only matchable ones are scored.
    spines = annotations
    work = args.work or tempfile.mkdtemp(prefix="match-bench-")
    os.makedirs(work, exist_ok=True)
    report = {"spines": len(spines), "matchable": sum(1 for r in spines if matchable(r))}

    explained = {}
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
        # The same rows again with the evidence behind each match (same matches; timed apart from the run above).
        explained[name], _, opened_reused, _ = run_matcher(args.binary, path, spines, not with_tags, index,
                                                           ["--explain"])
        assert [o["title"] for o in explained[name]] == [o["title"] for o in outputs]
        report[name]["index_reopen_s"] = opened_reused
        report[name]["misses"] = classify_misses(spines, explained[name])
        print(f"{name}: {json.dumps(report[name])}", file=sys.stderr)
        if args.failures:
            print(f"{name}: wrong development matches", file=sys.stderr)
            print_failures(spines, explained[name], args.failures)

    if args.fit:
        # One curve for both catalogue kinds: the tag feature is 0 without tags. Development photos only.
        xs, ys = [], []
        for name in explained:
            for r, o in zip(spines, explained[name]):
                if o["title"] and split_of(r["image_name"]) == "dev":
                    xs.append(evidence_vector(o["evidence"]))
                    ys.append(1 if is_right(r, o) else 0)
        weights = fit_logistic(xs, ys)
        report["calibration"] = {"features": ["bias"] + FEATURES, "weights": weights, "fitted_on": len(xs)}
        print("fitted calibration (development photos, %d matches):" % len(xs), file=sys.stderr)
        for feature, weight in zip(["bias"] + FEATURES, weights):
            print(f"    public var {feature}: Double = {weight:.3f}", file=sys.stderr)
        for name in explained:
            report["calibration"][name] = calibration_figures(
                spines, explained[name], lambda o: apply_logistic(weights, evidence_vector(o["evidence"])))
            print(f"refitted {name}: {json.dumps(report['calibration'][name])}", file=sys.stderr)

    if not args.no_baseline:
        report["baseline"] = baseline(spines, catalogue)
        print(f"baseline: {json.dumps(report['baseline'])}", file=sys.stderr)

    sizes = {"15k": 0, "150k": 150_000, "1.5M": 1_500_000}
    report["scale"] = {}
    # The held-out photos' regions only: enough spines for the timing, and half the wait at 1.5M.
    scale_spines = [r for r in spines if split_of(r["image_name"]) == "test"]
    for scale in filter(None, args.scales.split(",")):
        total = sizes[scale]
        rows = catalogue + (distractors(catalogue, total - len(catalogue), seed=19) if total else [])
        path = os.path.join(work, f"catalogue-{scale}.csv")
        write_catalogue(path, rows, with_tags=False)
        index = path + ".index.sqlite"
        if os.path.exists(index):
            os.remove(index)
        outputs, ms, opened, _ = run_matcher(args.binary, path, scale_spines, True, index)
        figures = evaluate(scale_spines, outputs)["test"]
        report["scale"][scale] = {"entries": len(rows), "ms_per_spine": ms, "index_build_s": opened,
                                  "index_bytes": os.path.getsize(index), "csv_bytes": os.path.getsize(path),
                                  "top1_annotated": figures["top1_annotated"],
                                  "precision_at_0.8": figures["precision_at_0.8"]}
        print(f"scale {scale}: {json.dumps(report['scale'][scale])}", file=sys.stderr)

    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
