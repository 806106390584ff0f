"""Writes a link order file from callgrind runs: every function callgrind saw executed in one binary, in the order
first seen, for lld's --symbol-ordering-file (scripts/hot-functions.sh, Benchmarks/WebBench/hot-functions.sh).

Usage: python3 scripts/order-from-callgrind.py WORK_DIR ORDER_FILE BINARY_NAME
WORK_DIR holds the runs' callgrind.* files; BINARY_NAME is the file name the runs executed (swiftwing, swiftwing-web).
"""
import glob
import re
import sys

work, out, binary = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}
for path in sorted(glob.glob(f"{work}/callgrind.*")):
    obj = None
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            obj = line[3:].strip()
        elif line.startswith("fn=") and obj and obj.endswith("/" + binary):
            name = re.sub(r"'\d+$", "", line[3:].strip())  # callgrind marks recursion depth as name'2
            if name and not name.startswith("0x"):
                seen[name] = True
if len(seen) < 1000:
    sys.exit(f"only {len(seen)} functions seen: callgrind did not follow {binary}")
with open(out, "w") as f:
    f.write("\n".join(seen) + "\n")
print(f"{out}: {len(seen)} functions")
