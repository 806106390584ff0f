"""The library in a real browser: Debian's chromium, headless, driven by chromium-driver through selenium.

Runs the real binaries on loopback: `swiftwing run` on the synthetic camera (no backend) drawing its panel into a PNG,
`swiftwing-web` beside it over a state directory seeded with known books, and the CLI to ask for a pairing code and to
press the shutter. The browser pairs as a phone would: zbarimg (Debian's zbar-tools) reads the QR code off the panel's
PNG, chromium opens that address and Pair is pressed; what the CLI prints is not used. Each check
prints `browser-result NAME ok|fail`; the last line counts them. With --screenshots DIR it also saves every page at
390x844 and 1280x800.

Usage: browser_test.py BUILD_DIR [--screenshots DIR]   (BUILD_DIR holds swiftwing, swiftwing-web and ExportBench)
"""

import csv
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import (NoAlertPresentException, NoSuchElementException,
                                        StaleElementReferenceException, WebDriverException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WAIT = 20  # seconds a step may wait for the page; never a measure of speed
SPINES = 25  # spines to check seeded beside the books: more than one review page holds
# Every page a person meets, checked by axe-core at a phone's and a desktop's width.
AXE_PAGES = ("/", "/library", "/books/2", "/review", "/review?page=1", "/queue", "/export")
AXE_WIDTHS = ((390, 844), (1280, 800))


def axe_source():
    """axe-core 4.9 as the selenium-axe-python wheel ships it (pinned in requirements.txt), read without importing it."""
    import importlib.util
    package = importlib.util.find_spec("selenium_axe_python")
    if package is None:
        raise RuntimeError("selenium-axe-python is not installed: scripts/web-browser-test.sh installs it")
    with open(os.path.join(os.path.dirname(package.origin), "axe-core", "axe.min.js")) as script:
        return script.read()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Device:
    """The daemon and the web process over one temporary state directory."""

    def __init__(self, build):
        self.build = build
        self.root = tempfile.mkdtemp(prefix="sw-browser-")
        self.state = os.path.join(self.root, "state")
        self.socket = os.path.join(self.root, "control.sock")
        self.port = free_port()
        self.panel = os.path.join(self.root, "panel.png")
        self.config = os.path.join(self.root, "swiftwing.toml")
        with open(self.config, "w") as config:
            config.write(
                f'[daemon]\nstate_directory = "{self.state}"\ncontrol_socket = "{self.socket}"\n'
                f'[web]\nenabled = true\naddress = "127.0.0.1"\nport = {self.port}\n')
        self.environment = dict(os.environ, SWIFTWING_ENRICHMENT_BASE_URL="http://127.0.0.1:9/",
                                SWIFTWING_CAMERA_WIDTH="1280", SWIFTWING_CAMERA_HEIGHT="720")
        self.environment.pop("NOTIFY_SOCKET", None)
        self.processes = []

    def start(self):
        subprocess.run([os.path.join(self.build, "ExportBench"), "seed", self.state, "30",
                        os.path.join(self.root, "expected.json"), str(SPINES)], check=True, stdout=subprocess.DEVNULL)
        shelves = os.path.join(ROOT, "Fixtures", "shelves")
        self.spawn("daemon", [os.path.join(self.build, "swiftwing"), "run", "--config", self.config,
                              "--camera", f"synthetic:{shelves}", "--panel", f"png:{self.panel}"])
        deadline = time.monotonic() + 60
        while '"running" : true' not in self.cli("status", "--json", check=False):
            if time.monotonic() > deadline:
                raise RuntimeError("the daemon did not answer within 60 s:\n" + self.log("daemon"))
            time.sleep(0.1)
        self.spawn("web", [os.path.join(self.build, "swiftwing-web"), "--config", self.config])
        deadline = time.monotonic() + 60
        while "listening on" not in self.log("web"):
            if time.monotonic() > deadline:
                raise RuntimeError("swiftwing-web did not listen within 60 s:\n" + self.log("web"))
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def spawn(self, name, arguments):
        log = open(os.path.join(self.root, name + ".log"), "w")
        self.processes.append(subprocess.Popen(arguments, stdout=log, stderr=subprocess.STDOUT, env=self.environment))

    def log(self, name):
        try:
            with open(os.path.join(self.root, name + ".log")) as log:
                return log.read()
        except OSError:
            return ""

    def cli(self, *arguments, check=True):
        result = subprocess.run([os.path.join(self.build, "swiftwing"), *arguments, "--config", self.config],
                                capture_output=True, text=True, env=self.environment)
        if check and result.returncode != 0:
            raise RuntimeError(f"swiftwing {' '.join(arguments)} failed: {result.stderr}")
        return result.stdout

    def panel_qr_code(self):
        """The text of the QR code on the panel, once the daemon has drawn one into its PNG (written atomically)."""
        deadline = time.monotonic() + 60
        while True:
            if os.path.exists(self.panel):
                read = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", self.panel],
                                      capture_output=True, text=True)
                if read.returncode == 0 and read.stdout.strip():
                    return read.stdout.strip()
            if time.monotonic() > deadline:
                raise RuntimeError("no QR code on the panel within 60 s:\n" + self.log("daemon")[-3000:])
            time.sleep(0.2)

    def stop(self):
        for process in reversed(self.processes):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(self.root, ignore_errors=True)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments):
        return None


def raw_request(url, data=None, cookie=None):
    """One request outside the browser: (status, headers, body)."""
    request = urllib.request.Request(url, data=data)
    if cookie:
        request.add_header("Cookie", cookie)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=WAIT) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


class BrowserTest:
    def __init__(self, device, downloads, screenshots):
        self.device = device
        self.downloads = downloads
        self.screenshots = screenshots
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,800", "--no-first-run", "--disable-extensions"):
            options.add_argument(argument)
        options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                                  "download.prompt_for_download": False})
        service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        self.results = []

    def check(self, name, step):
        try:
            step()
            self.results.append((name, True))
            print(f"browser-result {name} ok", flush=True)
        except Exception:
            self.results.append((name, False))
            print(f"browser-result {name} fail", flush=True)
            traceback.print_exc()
            print("page:", self.driver.current_url, self.driver.page_source[:3000], sep="\n")

    def open(self, path):
        self.driver.get(self.device.url + path)

    def wait(self, condition, what):
        # A form's submit navigates: until the next page is in, the old page's elements go stale or are missing.
        # Those are "not yet", not failures. chromedriver reports an element found on the old page and read on the
        # new one as a plain WebDriverException ("Node with given id does not belong to the document"): the same.
        def ready(driver):
            try:
                return condition()
            except WebDriverException as error:
                if "does not belong to the document" in str(error):
                    return False
                raise
        WebDriverWait(self.driver, WAIT, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
                      ).until(ready, message=what)

    def text(self):
        return self.driver.find_element(By.TAG_NAME, "main").text

    def cookie(self):
        return "swiftwing_session=" + self.driver.get_cookie("swiftwing_session")["value"]

    def csrf(self):
        return self.driver.find_element(By.NAME, "csrf").get_attribute("value")

    def submit(self, form_action):
        self.driver.find_element(By.CSS_SELECTOR, f'form[action="{form_action}"] button[type=submit]').click()

    def shoot(self, name):
        if not self.screenshots:
            return
        for width, height in ((390, 844), (1280, 800)):
            self.driver.set_window_size(width, height)
            time.sleep(0.2)
            self.driver.save_screenshot(os.path.join(self.screenshots, f"web-{name}-{width}.png"))
        self.driver.set_window_size(1280, 800)

    # The checks, in the order a person meets them.

    def refused_without_pairing(self):
        self.driver.set_window_size(1280, 800)
        status, headers, body = raw_request(self.device.url + "/library")
        assert status == 303 and headers["Location"] == "/pair", (status, body)
        status, _, _ = raw_request(self.device.url + "/books/1/delete", data=b"csrf=x")
        assert status == 401, status
        self.open("/library")
        self.wait(lambda: self.driver.current_url.endswith("/pair"), "the pairing page")

    def pairs_with_the_code_on_the_panel(self):
        # Someone asks for a code (the command's output is not read): the daemon draws it on the panel with the QR
        # code of the pairing address, which a phone's camera would read.
        self.device.cli("web", "pair")
        address = self.device.panel_qr_code()
        assert re.fullmatch(re.escape(self.device.url) + r"/pair\?code=\d{6}", address), address
        self.driver.get(address)
        self.wait(lambda: self.driver.find_elements(By.ID, "code"), "the pairing form")
        assert self.driver.find_element(By.ID, "code").get_attribute("value") == address[-6:], "the code filled in"
        assert self.driver.get_cookie("swiftwing_session") is None, "opening the address paired by itself"
        status, _, _ = raw_request(self.device.url + "/library", cookie=None)
        assert status == 303, "not paired before Pair is pressed"
        self.shoot("pair")
        self.submit("/pair")
        self.wait(lambda: self.driver.find_elements(By.ID, "now-status"), "the Now page")
        cookie = self.driver.get_cookie("swiftwing_session")
        assert cookie["httpOnly"] and cookie.get("sameSite") == "Strict", cookie

    def refused_without_csrf(self):
        status, _, body = raw_request(self.device.url + "/books/1/delete", data=b"", cookie=self.cookie())
        assert status == 403, (status, body)
        status, _, _ = raw_request(self.device.url + "/books/1", cookie=self.cookie())
        assert status == 200, "book 1 is still there"

    def searches_as_you_type(self):
        self.open("/library")
        self.shoot("library")
        self.driver.execute_script("window.notReloaded = true")
        self.driver.find_element(By.ID, "q").send_keys("Dune")
        self.wait(lambda: "match “Dune”" in self.driver.find_element(By.ID, "grid").text, "search results")
        titles = [tile.text for tile in self.driver.find_elements(By.CSS_SELECTOR, ".tile .title")]
        assert titles and all(title.startswith("Dune") for title in titles), titles
        assert self.driver.execute_script("return window.notReloaded === true"), "the page reloaded"

    def edits_with_a_bad_then_a_good_isbn(self):
        self.driver.find_element(By.CSS_SELECTOR, ".tile a").click()
        self.wait(lambda: self.driver.find_elements(By.ID, "isbn"), "the book page")
        self.book_path = self.driver.current_url[len(self.device.url):]
        isbn = self.driver.find_element(By.ID, "isbn")
        isbn.clear()
        isbn.send_keys("978-0-441-01359-2")
        self.submit(self.book_path + "/edit")
        self.wait(lambda: self.driver.find_elements(By.ID, "problem"), "the ISBN's error")
        problem = self.driver.find_element(By.ID, "problem").text
        assert "fails its checksum (the last character should be 3)" in problem, problem
        self.shoot("book-error")
        title = self.driver.find_element(By.ID, "title")
        title.clear()
        title.send_keys("<script>alert(1)</script>")
        isbn = self.driver.find_element(By.ID, "isbn")
        isbn.clear()
        isbn.send_keys("978-0-441-01359-3")
        self.submit(self.book_path + "/edit")
        self.wait(lambda: "9780441013593" in self.text(), "the saved ISBN")
        assert self.driver.find_element(By.TAG_NAME, "h1").text == "<script>alert(1)</script>"
        try:
            self.driver.switch_to.alert
            raise AssertionError("the title ran as a script")
        except NoAlertPresentException:
            pass
        self.shoot("book")

    def approves_from_review(self):
        self.open("/review")
        self.shoot("review")
        first = self.driver.find_element(By.CSS_SELECTOR, ".rows li a")
        book = first.get_attribute("href").rsplit("/", 1)[1]
        self.submit(f"/books/{book}/approve")
        self.wait(lambda: f"Approved book {book}." in self.text(), "the approval")
        assert f'href="/books/{book}"' not in self.driver.page_source, "the approved book left the list"

    def deletes_and_undoes(self):
        self.open(self.book_path)
        self.submit(self.book_path + "/delete")
        self.wait(lambda: "Deleted “<script>alert(1)</script>”." in self.text(), "the undo offer")
        status, _, _ = raw_request(self.device.url + self.book_path, cookie=self.cookie())
        assert status == 404, status
        self.submit("/undo")
        self.wait(lambda: self.driver.current_url.endswith(self.book_path), "the book back")
        assert "9780441013593" in self.text()

    def downloads_both_exports(self):
        self.open("/export")
        self.shoot("export")
        for link, name, header in (("/export/swiftwing.csv", "SwiftWing_Library_", "ISBN-13"),
                                   ("/export/goodreads.csv", "_goodreads.csv", "Book Id")):
            self.driver.find_element(By.CSS_SELECTOR, f'a[href="{link}"]').click()
            def finished():
                files = [f for f in os.listdir(self.downloads) if name in f and f.endswith(".csv")]
                return files[0] if files else None
            self.wait(finished, f"the download of {link}")
            if name == "SwiftWing_Library_":
                path = [f for f in os.listdir(self.downloads) if "goodreads" not in f][0]
            else:
                path = finished()
            with open(os.path.join(self.downloads, path), newline="", encoding="utf-8") as file:
                rows = list(csv.reader(file))
            assert rows[0][0] == header, rows[0]
            assert len(rows) == 31, f"{len(rows)} rows in {path}"

    def sees_a_press_without_reloading(self):
        self.open("/")
        self.wait(lambda: "READY" in self.driver.find_element(By.ID, "now-status").text, "the daemon ready")
        self.shoot("now")
        self.driver.execute_script("window.notReloaded = true")
        scan = self.device.cli("shutter").strip()
        assert re.fullmatch(r"[0-9a-f-]{36}", scan), scan
        self.wait(lambda: scan[:8] in self.driver.find_element(By.ID, "now-status").text, "the new scan on the page")
        assert self.driver.execute_script("return window.notReloaded === true"), "the page reloaded"
        self.open("/queue")
        self.wait(lambda: self.driver.execute_script(
            "var i = document.querySelector('.rows img'); return i && i.complete && i.naturalWidth > 0"),
            "the scan's thumbnail")
        self.shoot("queue")

    def daemon_goes_on_without_the_web_process(self):
        books = self.device.cli("library", "--json")
        web = self.device.processes[-1]
        web.kill()
        web.wait()
        scan = self.device.cli("shutter").strip()
        assert re.fullmatch(r"[0-9a-f-]{36}", scan), scan
        assert scan in self.device.cli("queue", "--json"), "the press after the kill is queued"
        assert self.device.cli("library", "--json") == books, "the library changed when the web process died"

    def axe_violations(self, path):
        """axe-core's serious and critical violations on `path` at each width, as 'width path rule: nodes' lines."""
        found = []
        for width, height in AXE_WIDTHS:
            self.driver.set_window_size(width, height)
            self.open(path)
            self.driver.execute_script(axe_source())
            self.driver.set_script_timeout(60)
            result = self.driver.execute_async_script(
                "var done = arguments[arguments.length - 1];"
                "axe.run(document, {resultTypes: ['violations']}).then(function (r) { done(r.violations); },"
                " function (e) { done([{id: 'axe-error', impact: 'critical', nodes: [String(e)]}]); });")
            for violation in result:
                if violation.get("impact") in ("serious", "critical"):
                    nodes = [node.get("target") if isinstance(node, dict) else node for node in violation["nodes"]]
                    found.append(f"{width}px {path} {violation['id']} ({violation.get('impact')}): {nodes[:3]}")
        self.driver.set_window_size(1280, 800)
        return found

    def pair_page_is_accessible(self):
        found = self.axe_violations("/pair")
        assert not found, "\n".join(found)

    def pages_are_accessible(self):
        spine = self.first_spine()
        found = []
        for path in AXE_PAGES + (f"/spines/{spine}",):
            found += self.axe_violations(path)
        assert not found, "\n".join(found)

    def first_spine(self):
        self.open("/review")
        return self.driver.find_element(By.CSS_SELECTOR, "form.candidates").get_attribute("action").split("/")[-2]

    def reviews_spines_in_one_tap_keyboard_only_without_scripts(self):
        # Scripts off for this page and the next: the review is plain forms and links.
        self.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
        try:
            self.open("/review")
            assert f"{SPINES} spines to check, 1–20 shown." in self.text(), self.text()[:300]
            self.shoot("review-spines")
            spine = self.driver.find_element(By.CSS_SELECTOR, ".spine-item")
            picture = spine.find_element(By.CSS_SELECTOR, "img.spine-picture")
            assert picture.get_attribute("alt").startswith("The spine as photographed, read as “SPINE 0"), \
                picture.get_attribute("alt")
            buttons = spine.find_elements(By.CSS_SELECTOR, "form.candidates button")
            assert [b.get_attribute("aria-label") for b in buttons][:2] == [
                "It is The Dragonbone Chair #0 by Tad Williams, 62 %", "It is Stone of Farewell by Tad Williams, 21 %"
            ], [b.get_attribute("aria-label") for b in buttons]
            # The markup in a candidate's title is text.
            assert "<b>To Green Angel Tower</b>" in buttons[2].text, buttons[2].text
            # One key press on the first candidate, as a keyboard or a switch would give it.
            buttons[0].send_keys(Keys.ENTER)
            self.wait(lambda: "Added “The Dragonbone Chair #0” to the library." in self.text(), "the book landed")
            assert f"{SPINES - 1} spines to check" in self.text()
            # Not a book.
            second = self.driver.find_element(By.CSS_SELECTOR, ".spine-item form[action$='/dismiss'] button")
            second.send_keys(Keys.ENTER)
            self.wait(lambda: "is not a book: it left the list." in self.text(), "the spine dismissed")
            # None of these: the spine's page, the title typed over the text read.
            self.driver.find_element(By.LINK_TEXT, "None of these…").send_keys(Keys.ENTER)
            self.wait(lambda: self.driver.find_elements(By.ID, "title"), "the spine's page")
            assert self.driver.find_element(By.ID, "title").get_attribute("value").startswith("SPINE 2 ")
            self.shoot("spine")
            title = self.driver.find_element(By.ID, "title")
            title.clear()
            title.send_keys("Shadowmarch")
            self.driver.find_element(By.ID, "authors").send_keys("Tad Williams")
            title.send_keys(Keys.ENTER)
            self.wait(lambda: "Added “Shadowmarch” to the library." in self.text(), "the typed book landed")
            assert f"{SPINES - 3} spines to check" in self.text()
            books = json.loads(self.device.cli("library", "--json"))["books"]
            assert {"The Dragonbone Chair #0", "Shadowmarch"} <= {book["title"] for book in books}
            status = self.device.cli("status")
            assert f"{SPINES - 3} spines to check" in status, status
        finally:
            self.driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})

    def run(self):
        self.check("pair-page-accessible", self.pair_page_is_accessible)
        self.check("refused-without-pairing", self.refused_without_pairing)
        self.check("pairs-with-the-panels-code", self.pairs_with_the_code_on_the_panel)
        self.check("refused-without-csrf", self.refused_without_csrf)
        self.check("searches-as-you-type", self.searches_as_you_type)
        self.check("edits-bad-then-good-isbn", self.edits_with_a_bad_then_a_good_isbn)
        self.check("approves", self.approves_from_review)
        self.check("deletes-and-undoes", self.deletes_and_undoes)
        self.check("downloads-both-exports", self.downloads_both_exports)
        self.check("reviews-spines-in-one-tap", self.reviews_spines_in_one_tap_keyboard_only_without_scripts)
        self.check("pages-accessible-390-1280", self.pages_are_accessible)
        self.check("sees-a-press-live", self.sees_a_press_without_reloading)
        self.check("daemon-unaffected-by-web-kill", self.daemon_goes_on_without_the_web_process)
        self.driver.quit()
        return self.results


def main():
    build = os.path.abspath(sys.argv[1])
    screenshots = None
    if "--screenshots" in sys.argv:
        screenshots = os.path.abspath(sys.argv[sys.argv.index("--screenshots") + 1])
        os.makedirs(screenshots, exist_ok=True)
    device = Device(build)
    downloads = tempfile.mkdtemp(prefix="sw-downloads-")
    results = []
    try:
        device.start()
        results = BrowserTest(device, downloads, screenshots).run()
    except Exception:
        traceback.print_exc()
        results.append(("setup", False))
        print("browser-result setup fail")
        print(device.log("daemon")[-3000:], device.log("web")[-3000:], sep="\n")
    finally:
        device.stop()
        shutil.rmtree(downloads, ignore_errors=True)
    passed = sum(1 for _, ok in results if ok)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) and results else 1


if __name__ == "__main__":
    sys.exit(main())
