#!/usr/bin/env python3
"""Makes the open catalogue the recognizer ships (Catalogues/goodbooks-10k/goodbooks-10k.csv) from goodbooks-10k's
books.csv (https://github.com/zygmuntz/goodbooks-10k, CC BY-SA 4.0, by Zygmunt Zając).

The output is in Goodreads' export layout, so the recognizer reads it as it reads an owner's Goodreads export, with
only the columns it uses: Book Id (goodreads_book_id), Title (with Goodreads' series suffix), Author (the first of
`authors`), Additional Authors (the rest), ISBN and ISBN13 (Goodreads' ="…" form), Original Publication Year.
goodbooks stores the ISBN as a number (leading zeros lost) and ISBN-13 as a rounded float: the ISBN is padded to
ten characters and kept only when its check digit holds, and ISBN13 is computed from it. Rows keep goodbooks'
order (most rated first).

Usage: scripts/make-open-catalogue.py BOOKS_CSV [OUT_CSV]
"""
import csv
import os
import sys


def isbn10(value):
    value = (value or "").strip().upper()
    if not value:
        return None
    value = value.zfill(10)
    if len(value) != 10 or not value[:9].isdigit() or not (value[9].isdigit() or value[9] == "X"):
        return None
    total = sum((10 - i) * int(c) for i, c in enumerate(value[:9])) + (10 if value[9] == "X" else int(value[9]))
    return value if total % 11 == 0 else None


def isbn13(ten):
    body = "978" + ten[:9]
    check = (10 - sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(body)) % 10) % 10
    return body + str(check)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    source = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, "Catalogues", "goodbooks-10k", "goodbooks-10k.csv")
    with open(source, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    kept = repaired = 0
    with open(out, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["Book Id", "Title", "Author", "Additional Authors", "ISBN", "ISBN13",
                         "Original Publication Year"])
        for row in rows:
            authors = [a.strip() for a in row["authors"].split(",") if a.strip()]
            ten = isbn10(row["isbn"])
            repaired += ten is not None and ten != row["isbn"].strip()
            year = row["original_publication_year"].strip()
            year = year[:-2] if year.endswith(".0") else year
            writer.writerow([row["goodreads_book_id"], row["title"].strip(), authors[0] if authors else "",
                             ", ".join(authors[1:]), f'="{ten}"' if ten else '=""',
                             f'="{isbn13(ten)}"' if ten else '=""', year])
            kept += 1
    print(f"make-open-catalogue: {kept} books to {out} ({repaired} ISBNs padded; "
          f"{sum(1 for r in rows if r['isbn'].strip() and not isbn10(r['isbn']))} invalid ISBNs dropped)")


if __name__ == "__main__":
    main()
