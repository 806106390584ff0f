"""What the library in a browser costs with 10,000 books: swiftwing-web's resident memory, and the server time
(its Server-Timing header) of the library page, a search and a page further on, against the static style sheet
(no database) in the same run as the baseline.

Usage: python3 Benchmarks/WebBench/web_cost.py BUILD_DIR [--books N] [--spines S] [--runs R] [--web BINARY]
BUILD_DIR holds swiftwing, swiftwing-web and ExportBench; --web measures another swiftwing-web (a release build).
The resident set is read idle (listening, nothing asked yet) and after every page was asked for and the live
stream (/events) gave its first status event, with where it lies: the binary, each shared library, and anonymous
memory (heap, stacks), from /proc/PID/smaps; and the binary's own mappings one by one (code, read-only data, the
relocated data the loader writes), with the pages of each that are privately dirty.
"""

import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def option(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def memory(pid, binary):
    """VmRSS, VmHWM, RssAnon, RssFile in kB and the thread count; the resident kB of each mapping's file (anonymous
    as one entry); and the binary's own mappings one by one (permissions, size, resident and privately dirty kB)."""
    status = {line.split(":")[0]: int(line.split()[1]) for line in open(f"/proc/{pid}/status")
              if line.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads"))}
    where, name, own, mapping = {}, None, [], None
    for line in open(f"/proc/{pid}/smaps"):
        fields = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            name = os.path.basename(fields[5]) if len(fields) > 5 and fields[5].startswith("/") else "(anonymous)"
            mapping = None
            if len(fields) > 5 and os.path.realpath(fields[5]) == os.path.realpath(binary):
                mapping = {"perms": fields[1], "offset": int(fields[2], 16)}
                own.append(mapping)
        elif fields[0] in ("Size:", "Rss:", "Private_Dirty:") and mapping is not None:
            mapping[fields[0][:-1]] = int(fields[1])
        if fields[0] == "Rss:":
            where[name] = where.get(name, 0) + int(fields[1])
    return status, where, own


def main():
    build = os.path.abspath(sys.argv[1])
    books, runs, spines = option("--books", 10_000), option("--runs", 30), option("--spines", 500)
    root = tempfile.mkdtemp(prefix="sw-webbench-")
    state = os.path.join(root, "state")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = os.path.join(root, "swiftwing.toml")
    with open(config, "w") as file:
        file.write(f'[daemon]\nstate_directory = "{state}"\ncontrol_socket = "{root}/control.sock"\n'
                   f'[web]\nenabled = true\naddress = "127.0.0.1"\nport = {port}\n')
    subprocess.run([os.path.join(build, "ExportBench"), "seed", state, str(books), os.path.join(root, "books.json"),
                    str(spines)],
                   check=True, stdout=subprocess.DEVNULL)
    log = open(os.path.join(root, "web.log"), "w")
    binary = sys.argv[sys.argv.index("--web") + 1] if "--web" in sys.argv else os.path.join(build, "swiftwing-web")
    web = subprocess.Popen([binary, "--config", config], stdout=log,
                           stderr=subprocess.STDOUT)
    try:
        while "listening on" not in open(os.path.join(root, "web.log")).read():
            time.sleep(0.05)
        time.sleep(1)  # the start's last allocations settle
        idle, idle_where, idle_own = memory(web.pid, binary)
        printed = subprocess.run([os.path.join(build, "swiftwing"), "web", "pair", "--config", config],
                                 capture_output=True, text=True, check=True).stdout
        code = re.search(r"code (\d{6})", printed).group(1)

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *arguments):
                return None

        opener = urllib.request.build_opener(NoRedirect)
        try:
            opener.open(f"http://127.0.0.1:{port}/pair", data=f"code={code}".encode())
        except urllib.error.HTTPError as answer:
            cookie = answer.headers["Set-Cookie"].split(";")[0]

        def server_ms(path):
            request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Cookie": cookie})
            with opener.open(request) as answer:
                answer.read()
                return float(re.search(r"dur=([0-9.]+)", answer.headers["Server-Timing"]).group(1))

        paths = [("style sheet (baseline)", "/static/app.css"), ("library page", "/library"),
                 ("library page 100", "/library?page=100"), ("library by title", "/library?sort=title"),
                 ("search 'dune'", "/library?q=dune"), ("search as you type 'frank h'", "/library/grid?q=frank+h"),
                 ("book page", "/books/5000"), ("Now page", "/"),
                 (f"review page ({spines} spines to check)", "/review"), ("a spine's page", "/spines/250"),
                 ("a spine's picture", "/spines/250/picture")]
        figures = {name: [] for name, _ in paths}
        for _ in range(runs):
            for name, path in paths:
                figures[name].append(server_ms(path))
        # The live stream a Now page keeps open: its first status event read, then the connection closed.
        events = urllib.request.Request(f"http://127.0.0.1:{port}/events", headers={"Cookie": cookie})
        with opener.open(events) as stream:
            received = b""
            while b"event: status" not in received or not received.endswith(b"\n\n"):
                received += stream.read1(4096)
        loaded, loaded_where, loaded_own = memory(web.pid, binary)
        baseline = statistics.median(figures[paths[0][0]])
        print(f"swiftwing-web, {books} books, {runs} runs each (server time, median / max, ms; ratio to baseline):")
        for name, values in figures.items():
            median = statistics.median(values)
            print(f"  {name:32} {median:8.2f} / {max(values):8.2f}   x{median / baseline:7.1f}")
        print(f"resident kB idle: VmRSS {idle['VmRSS']}, VmHWM {idle['VmHWM']}; after {runs * len(paths)} requests "
              f"and a live stream: "
              f"VmRSS {loaded['VmRSS']}, VmHWM {loaded['VmHWM']}; threads {idle['Threads']} / {loaded['Threads']}")
        print(f"  RssAnon {idle['RssAnon']} / {loaded['RssAnon']}, RssFile {idle['RssFile']} / {loaded['RssFile']} "
              "(idle / after)")
        print("the binary's mappings (permissions, file offset, size kB; resident and privately dirty kB, idle / after):")
        for before, after in zip(idle_own, loaded_own):
            print(f"  {after['perms']} {after['offset']:#10x} {after['Size']:8}   {before['Rss']:7} / {after['Rss']:7}"
                  f"   dirty {before['Private_Dirty']:6} / {after['Private_Dirty']:6}")
        print("where (resident kB idle / after), largest first:")
        for name in sorted(loaded_where, key=lambda key: -loaded_where[key]):
            if max(loaded_where[name], idle_where.get(name, 0)) >= 100:
                print(f"  {name:40} {idle_where.get(name, 0):7} / {loaded_where[name]:7}")
        small = sum(value for key, value in loaded_where.items() if max(value, idle_where.get(key, 0)) < 100)
        print(f"  {'(each below 100 kB, together)':40} {'':7}   {small:7}")
    finally:
        web.terminate()
        web.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
