"""The bumblebee client (gk_bumblebee_connect, src/launch/bumblebee.c), run
through tests/unit/test_bumblebee.c against the fake daemon in
tests/fake_bumblebee/: it asks for the GPU without an X server, holds it for
as long as its connection stays open, and names the fix when it cannot."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BUILD, SOURCE

FAKE_BUMBLEBEE = SOURCE / "tests" / "fake_bumblebee" / "fake_bumblebee.py"
CLIENT = BUILD / "tests" / "test_bumblebee"


class Daemon:
    def __init__(self, path, log, process):
        self.path, self.log_path, self.process = path, log, process

    def events(self):
        return self.log_path.read_text().splitlines()

    def wait_for(self, event, timeout=10):
        deadline = time.monotonic() + timeout
        while event not in self.events():
            assert time.monotonic() < deadline, f"daemon never logged {event!r}: {self.events()}"
            time.sleep(0.02)


@pytest.fixture
def start_daemon(tmp_path):
    """start_daemon(*flags, directory=tmp_path) -> Daemon; stopped at the end."""
    started = []

    def start(*flags, directory=tmp_path):
        path, log = Path(directory) / "bumblebee.socket", tmp_path / f"bumblebee{len(started)}.log"
        process = subprocess.Popen([sys.executable, str(FAKE_BUMBLEBEE), str(path),
                                    "--log", str(log), *flags])
        daemon = Daemon(path, log, process)
        started.append(daemon)
        deadline = time.monotonic() + 10
        while not (log.exists() and "listening" in daemon.events()):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        return daemon

    yield start
    for daemon in started:
        daemon.process.terminate()
        daemon.process.wait(timeout=10)


def client(*args, env=None, command_prefix=(), timeout=30):
    """Runs the client to completion with nothing on stdin (so a successful
    connection is released at once); returns (exit code, {key: value})."""
    result = subprocess.run([*command_prefix, str(CLIENT), *map(str, args)], env=env,
                            capture_output=True, text=True, timeout=timeout,
                            stdin=subprocess.DEVNULL)
    fields = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    return result.returncode, fields, result.stdout


def test_connect_holds_the_gpu_until_closed(start_daemon):
    daemon = start_daemon()
    process = subprocess.Popen([str(CLIENT), str(daemon.path)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    lines = [process.stdout.readline().strip() for _ in range(5)]
    assert lines == ["status=success", "why=Yes. X is active.", "error=", "cloexec=1", "held"]
    # The daemon got the no-X request, switched the card on, and the client
    # is still connected while it holds the descriptor.
    assert daemon.events()[1:] == ["connect 1", "recv 1 Connect NoX", "card on"]
    time.sleep(0.3)
    assert "disconnect 1" not in daemon.events()

    process.stdin.write("release\n")
    process.stdin.flush()
    assert process.stdout.readline().strip() == "released"
    assert process.wait(timeout=10) == 0
    daemon.wait_for("card off")
    assert daemon.events()[-2:] == ["disconnect 1", "card off"]


def test_two_clients_share_the_card(start_daemon):
    daemon = start_daemon()
    first = subprocess.Popen([str(CLIENT), str(daemon.path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    while first.stdout.readline().strip() != "held":
        pass
    code, fields, _ = client(daemon.path)  # connects and leaves at once
    assert code == 0 and fields["status"] == "success"
    daemon.wait_for("disconnect 2")
    assert "card off" not in daemon.events(), "the first client still holds the card"
    first.stdin.close()
    assert first.wait(timeout=10) == 0
    daemon.wait_for("card off")


def test_default_socket_comes_from_the_environment(start_daemon):
    daemon = start_daemon()
    code, fields, _ = client(env=dict(os.environ, GPUKIT_BUMBLEBEE_SOCKET=str(daemon.path)))
    assert code == 0 and fields["status"] == "success"
    daemon.wait_for("disconnect 1")
    assert "recv 1 Connect NoX" in daemon.events()


def test_daemon_refuses(start_daemon):
    daemon = start_daemon("--refuse")
    code, fields, stdout = client(daemon.path)
    assert code == 1 and fields["status"] == "driver error", stdout
    assert fields["why"] == "No - error: Could not enable discrete graphics card"
    assert "could not switch the discrete GPU on" in fields["error"]
    assert "Could not enable discrete graphics card" in fields["error"]
    assert "journalctl -u bumblebeed" in fields["error"]
    assert "fd=" not in stdout
    daemon.wait_for("disconnect 1")


def test_no_daemon(tmp_path):
    code, fields, _ = client(tmp_path / "bumblebee.socket")
    assert code == 1 and fields["status"] == "not found"
    assert "no bumblebee daemon socket at" in fields["error"]
    assert "sudo systemctl start bumblebeed" in fields["error"]
    assert "GPUKIT_BUMBLEBEE_SOCKET" in fields["error"]


def test_stale_socket(tmp_path):
    """A socket file left by a daemon that died: nothing listens on it."""
    path = tmp_path / "bumblebee.socket"
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(path))
    leftover.close()
    code, fields, _ = client(path)
    assert code == 1 and fields["status"] == "not found"
    assert "no longer running" in fields["error"]


def test_silent_daemon_times_out(start_daemon):
    daemon = start_daemon("--silent")
    started = time.monotonic()
    code, fields, _ = client("--timeout-ms", 300, daemon.path)
    elapsed = time.monotonic() - started
    assert code == 1 and fields["status"] == "timed out"
    assert "did not answer within 1 s" in fields["error"]
    assert "sudo systemctl restart bumblebeed" in fields["error"]
    assert elapsed < 5
    daemon.wait_for("disconnect 1")


def test_daemon_hangs_up(start_daemon):
    daemon = start_daemon("--hangup")
    code, fields, _ = client(daemon.path)
    assert code == 1 and fields["status"] == "input/output error"
    assert "closed the connection without answering" in fields["error"]


def test_permission_denied(start_daemon, tmp_path):
    """The daemon's socket belongs to the bumblebee group: others get the
    fix (join the group) rather than a bare errno."""
    if os.geteuid() != 0:
        daemon = start_daemon()
        daemon.path.chmod(0)
        prefix, program = (), CLIENT
    else:
        # root passes every permission check; run the client as nobody, from
        # places nobody can reach, against a socket only root may use.
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to drop root")
        shared = Path(tempfile.mkdtemp(prefix="gpukit-bb-"))
        shared.chmod(0o755)
        daemon = start_daemon(directory=shared)
        daemon.path.chmod(0o660)
        program = shared / "test_bumblebee"
        shutil.copy(CLIENT, program)
        program.chmod(0o755)
        prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    try:
        result = subprocess.run([*prefix, str(program), str(daemon.path)], capture_output=True,
                                text=True, timeout=30, stdin=subprocess.DEVNULL)
        if "sanitizer" in result.stderr.lower() and result.returncode not in (0, 1):
            pytest.skip("the sanitizer runtime does not run as nobody here")
        fields = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
        assert result.returncode == 1, result.stdout + result.stderr
        assert fields["status"] == "permission denied"
        assert "bumblebee group" in fields["error"]
        assert "sudo usermod -aG bumblebee $USER" in fields["error"]
        assert "connect" not in " ".join(daemon.events()[1:])
    finally:
        if os.geteuid() == 0:
            daemon.process.terminate()
            daemon.process.wait(timeout=10)
            shutil.rmtree(shared, ignore_errors=True)
