"""A stand-in for the OCR worker that speaks its protocol and misbehaves on request, for the supervisor's tests.
The image bytes say what to do: b"crash" exits with status 3 after a message on stderr, b"hang" never answers,
b"garbage" answers a line that is not JSON; anything else is answered with one line whose text is the byte count.
With the argument --no-ready it never says it is ready; with --bad-ready its first line is not the ready line."""
import json, struct, sys, time

if "--no-ready" in sys.argv:
    time.sleep(3600)
print("not json" if "--bad-ready" in sys.argv else json.dumps({"ready": True}), flush=True)
stdin = sys.stdin.buffer
while True:
    header = stdin.read(4)
    if len(header) < 4:
        sys.exit(0)
    data = stdin.read(struct.unpack(">I", header)[0])
    if data == b"crash":
        print("Traceback: fake worker told to crash", file=sys.stderr, flush=True)
        sys.exit(3)
    if data == b"hang":
        time.sleep(3600)
    if data == b"garbage":
        print("{not json", flush=True)
        continue
    square = [{"x": 1, "y": 2}, {"x": 11, "y": 2}, {"x": 11, "y": 7}, {"x": 1, "y": 7}]
    print(json.dumps({"width": 100, "height": 50,
                      "lines": [{"text": str(len(data)), "polygon": square, "score": 0.9}]}), flush=True)
