"""A real browser for the tests: Debian's Chromium, headless, driven through
its DevTools protocol (a websocket), so a test can load a page, wait for
what its scripts draw, read the DOM and take a screenshot. (Chromium's
--dump-dom cannot: its virtual time stops while a server-sent event stream
is open.) Used by tests/python and tests/package alike, so it imports
nothing of either's conftest."""
import base64
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import time

import urllib.request

import websocket

# No proxy the environment names may stand between the test and loopback.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Page:
    def __init__(self, socket):
        self.socket = socket
        self.ids = itertools.count(1)

    def call(self, method, **params):
        """Sends one DevTools command and returns its result."""
        message_id = next(self.ids)
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (JSON-able)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, expression, timeout=30):
        """Waits until a JavaScript expression is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression!r} (last value {value!r})")

    def goto(self, url):
        self.call("Page.navigate", url=url)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path


def chromium_command():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    raise AssertionError("no Chromium: apt-get install chromium (tools/check installs it)")


@contextlib.contextmanager
def browser(tmp_path, width=1280, height=1400):
    """Yields a Page of a fresh headless Chromium."""
    log = tmp_path / "chromium.log"
    process = subprocess.Popen(
        [chromium_command(), "--headless=new", "--no-sandbox", "--disable-gpu",
         "--no-proxy-server", "--no-first-run", "--remote-debugging-port=0",
         "--remote-allow-origins=*", f"--window-size={width},{height}", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'chromium-profile'}", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "w"),
        # not the sanitizer runtime a sanitized test run preloads into Python
        env={k: v for k, v in os.environ.items()
             if k != "LD_PRELOAD" and not k.endswith("SAN_OPTIONS")})
    try:
        # Its log says where DevTools listens (a file: Chromium logs a lot,
        # and a pipe nobody reads would stall it).
        deadline = time.monotonic() + 60
        endpoint = None
        while time.monotonic() < deadline and not endpoint and process.poll() is None:
            for line in log.read_text(errors="replace").splitlines():
                if "DevTools listening on ws://" in line:
                    endpoint = line.split("ws://", 1)[1].split("/", 1)[0]
            time.sleep(0.05)
        assert endpoint, "Chromium did not start its DevTools endpoint: " + log.read_text()[-2000:]
        with OPENER.open(f"http://{endpoint}/json/list", timeout=10) as response:
            pages = [t for t in json.loads(response.read()) if t["type"] == "page"]
        socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30,
                                             suppress_origin=True)
        try:
            page = Page(socket)
            page.call("Page.enable")
            page.call("Runtime.enable")
            yield page
        finally:
            socket.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
