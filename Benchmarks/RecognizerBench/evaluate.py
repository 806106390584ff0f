"""Scores `swiftwing-recognizer read --json` output against the Library Dataset's annotations.

Usage: evaluate.py [--detail] ANNOTATIONS.csv RESULT.json   (RESULT from bench.sh, which names each photo SIZE-NAME.jpg)
one_shelf.jpg holds one shelf, all of it annotated (the dataset's `_0` crop covers it); on two_shelves.jpg only the
bottom shelf is annotated, so a book whose box centre is in the top half is neither right nor wrong. Prints one JSON line per photo and one for all.
`confident_in_merged` counts confident reports that are wrong by title but name a book of a region the dataset
annotates as two books without a title (their words all in that region's OCR text): on the shelf, but not scorable.
`confident_hand_checked` counts those of them that a person checked on the photo (`HAND_CHECKED`: the reported box
cut out of the full photo and looked at) and found to be that very book's spine: these count as right.
--detail also lists, per photo, every spine in the annotated part, left to right (OK right, XX wrong, MM in such a
region, HC such a report checked by hand, blank unmatched) with its text and the title assigned, then the annotated books not found with the text the
dataset's OCR read on them."""
import csv, json, sys, unicodedata
from collections import Counter

# The photos and the part the dataset annotates: (annotation image name, top half? None: the whole photo).
ANNOTATED = {"one_shelf": ("20221128_101635_0.jpg", None), "two_shelves": ("20221128_100245_1.jpg", False)}


# Reports in regions the dataset annotates as several books run together, checked by hand: (photo, folded title) ->
# (the box centre's x, 0-1, within 0.012 of which the report must lie, and what the crop shows). A report of the
# same title elsewhere on the photo stays wrong.
HAND_CHECKED = {
    ("one_shelf", "guia completa running y maraton"): (
        0.864, "one white spine, 'GUÍA COMPLETA RUNNING Y MARATÓN', 'Manual pràctic' at its foot; the dataset's region "
        "55 runs it together with Cristina Borràs's neighbour; the catalogue's 796.422 Bor is in that region's text"),
    ("two_shelves", "els esquirols de central park estan tristos els dilluns"): (
        0.322, "one cream spine: '401', 'KATHERINE PANCOL', 'ELS ESQUIROLS DE CENTRAL PARK ESTAN TRISTOS ELS "
        "DILLUNS'; the dataset's region 1 covers it and two other Pancol spines"),
    ("two_shelves", "el vals lento de las tortugas"): (
        0.370, "one yellow spine: 'El vals lento de las tortugas' in coloured letters, 'KATHERINE PANCOL' below; the "
        "dataset's region 1 again"),
}


def hand_checked(name, title, box):
    checked = HAND_CHECKED.get((name, title))
    return checked is not None and abs(box["x"] + box["width"] / 2 - checked[0]) <= 0.012


def fold(text):
    text = unicodedata.normalize("NFKD", text or "")
    return " ".join("".join(c for c in text if not unicodedata.combining(c)).lower().split())


def in_merged_region(title, merged):
    words = [w for w in fold(title.split(" : ")[0]).split() if len(w) >= 3]
    return bool(words) and any(all(w in region for w in words) for region in merged)


def main():
    arguments = sys.argv[1:]
    detail = "--detail" in arguments
    annotations, result_path = [a for a in arguments if a != "--detail"]
    rows = list(csv.DictReader(open(annotations, encoding="utf-8")))
    result = json.load(open(result_path, encoding="utf-8"))
    totals = Counter()
    for image in result["images"]:
        name = image["file"].rsplit("/", 1)[-1].split("-", 1)[1].rsplit(".", 1)[0]
        annotation_name, top = ANNOTATED[name]
        expected = Counter(fold(r["title"]) for r in rows if r["image_name"] == annotation_name
                           and r["not_book"] == "False" and r["not_in_db"] == "False" and r["title"].strip())
        # Regions the dataset annotates as two books run together carry no title; a report whose title's words all
        # appear in such a region's OCR text is a book on the shelf that cannot be scored either way.
        merged = [set(fold(r["ocr"]).split()) for r in rows if r["image_name"] == annotation_name
                  and r["segmentation_merged_books"] == "True"]
        remaining = expected.copy()
        found = confident = confident_right = reported = confident_merged = confident_checked = 0
        listed = []
        for book in image["books"]:
            centre = book["boundingBox"]["y"] + book["boundingBox"]["height"] / 2
            if top is not None and (centre < 0.5) != top:
                continue
            reported += 1
            title = fold(book["title"])
            right = remaining[title] > 0
            if right:
                remaining[title] -= 1
                found += 1
            in_merged = not right and in_merged_region(title, merged)
            checked = not right and hand_checked(name, title, book["boundingBox"])
            if book["confidence"] >= 0.8:
                confident += 1
                confident_right += right or checked
                confident_merged += in_merged
                confident_checked += checked
            listed.append((book["boundingBox"]["x"], "OK" if right else "HC" if checked else "MM" if in_merged else "XX",
                           f'{book["text"]} -> {book["title"]} ({book["confidence"]:.2f})'))
        if detail:
            for spine in image.get("unmatched", []):
                centre = spine["boundingBox"]["y"] + spine["boundingBox"]["height"] / 2
                if top is None or (centre < 0.5) == top:
                    listed.append((spine["boundingBox"]["x"], "  ", spine["text"]))
            print(f"{name}:")
            for x, verdict, text in sorted(listed):
                print(f"  {verdict} x={x:.3f} {text}")
            missed = remaining.copy()
            for row in rows:
                if row["image_name"] == annotation_name and missed[fold(row["title"])] > 0:
                    missed[fold(row["title"])] -= 1
                    print(f"  missed: {row['title'].strip()} [{row['tag']}] (dataset OCR: {row['ocr'][:80]})")
        books = sum(expected.values())
        line = {"photo": name, "annotated": books, "found": found, "recall": round(found / books, 3),
                "reported_in_half": reported, "confident": confident, "confident_right": confident_right,
                "confident_precision": round(confident_right / confident, 3) if confident else None,
                "confident_in_merged": confident_merged, "confident_hand_checked": confident_checked}
        if "seconds" in image:
            line["seconds"] = image["seconds"]
        print(json.dumps(line))
        totals.update(annotated=books, found=found, confident=confident, confident_right=confident_right,
                      confident_in_merged=confident_merged, confident_hand_checked=confident_checked)
    print(json.dumps({"photo": "all", **totals, "recall": round(totals["found"] / totals["annotated"], 3),
                      "confident_precision": round(totals["confident_right"] / totals["confident"], 3)
                      if totals["confident"] else None}))


if __name__ == "__main__":
    main()
