"""A headless Chromium driven over the DevTools protocol through a pipe (--remote-debugging-pipe:
NUL-separated JSON on file descriptors 3 and 4), so tests need no package beyond the standard
library to open a page, watch its console and network, run script in it and take screenshots."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless browser with one page. Network access is cut off: every host name resolves to
    nothing and every connection goes to a closed proxy port, so a page that tries to fetch shows
    it as a failed request instead of reaching out."""

    def __init__(self, executable, width=1100, height=900):
        self.profile = tempfile.mkdtemp(prefix="kernscope-chromium-")
        # Chromium's own log goes to a file (a pipe nobody reads could fill and stall it).
        self._log = open(os.path.join(self.profile, "chromium.log"), "w+b")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        args = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--disable-default-apps", "--hide-scrollbars",
                "--force-device-scale-factor=1", f"--window-size={width},{height}",
                "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "--host-resolver-rules=MAP * ~NOTFOUND", "about:blank"]

        def wire_pipes():  # in the child: the pipe ends on descriptors 3 (read) and 4 (write)
            # Moved above 10 first, so neither lands on the other's target number.
            read_end, write_end = os.dup2(to_chrome_r, 10), os.dup2(from_chrome_w, 11)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        # pass_fds=(3, 4): the descriptors the child keeps open after wire_pipes has set them.
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self._log, pass_fds=(3, 4), preexec_fn=wire_pipes)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []  # every event of the page's session, in arrival order
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                self._log.seek(0)
                raise RuntimeError("chromium closed its pipe: " + self._log.read().decode(errors="replace")[-2000:])
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=False, timeout=60, **params):
        self._next_id += 1
        request = {"id": self._next_id, "method": method, "params": params}
        if session:
            request["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message and message.get("sessionId") == getattr(self, "session", None):
                self.events.append(message)

    def wait_for_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        while not any(e["method"] == method for e in self.events):
            message = self._read_message(deadline)
            if "method" in message and message.get("sessionId") == self.session:
                self.events.append(message)

    def open(self, url):
        self.call("Page.navigate", session=True, url=url)
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot_png(self):
        """The whole page (beyond the window) at one CSS pixel per image pixel."""
        size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = self.call("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=True, clip=clip)
        return base64.b64decode(shot["data"])

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
