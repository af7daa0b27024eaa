"""Starting `gpukit serve` on a free loopback port for the tests, and
talking HTTP to it without any proxy the environment may name."""
import contextlib
import os
import select
import signal
import subprocess
import time
import urllib.request

from conftest import GPUKIT

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Server:
    def __init__(self, process, url):
        self.process = process
        self.url = url

    def get(self, path, headers=None, timeout=10):
        """(status, headers, body text) of a GET."""
        request = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with OPENER.open(request, timeout=timeout) as response:
                return response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode()

    def stop(self, timeout=10):
        """SIGTERM, as systemd stops it; returns its exit status and stderr."""
        self.process.send_signal(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        return self.process.returncode, err


def wait_for_line(stream, timeout):
    """The next line of a pipe, or '' when none came in time."""
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            break
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            break
        line += chunk
    return line.decode()


@contextlib.contextmanager
def serving(env, *args, program=GPUKIT):
    """Runs `gpukit serve ARGS --listen 127.0.0.1:0` and yields a Server once
    it listens; stops it afterwards and checks that it stopped cleanly."""
    process = subprocess.Popen([str(program), "serve", *args, "--listen", "127.0.0.1:0"], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    line = wait_for_line(process.stderr, 30)
    if "listening on http://" not in line:
        process.kill()
        raise AssertionError(f"gpukit serve did not start: {line!r} "
                             f"{process.stderr.read().decode()!r}")
    url = line.split("listening on ", 1)[1].split()[0].rstrip("/")
    server = Server(process, url)
    try:
        yield server
    finally:
        if process.poll() is None:
            code, err = server.stop()
            assert code == 0, err
            assert "stopped" in err.decode()
