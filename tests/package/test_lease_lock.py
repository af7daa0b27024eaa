"""Nobody can stall another user's gpukit by holding the lease directory's
lock (docs/LEASES.md): with a rogue process holding it, `gpukit run`, `pick`,
`leases`, gpukit.reserve() and current_reservation() give up by their
deadline (a --wait limit, or GK_LEASE_LOCK_PATIENCE = 5 s) with a message
naming the holder's pid and user, exit status 6 or TimeoutError.

The rogue is flock(1) on the directory, as the test's own user and, when the
tests run as root (CI), as user nobody through setpriv. The directory is
under /tmp, reachable by nobody (pytest's tmp_path is private)."""
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from conftest import GPUKIT_CLI, child_env

PATIENCE = 5.0  # GK_LEASE_LOCK_PATIENCE, include/gpukit/lease.h
MARGIN = 3.0    # what a loaded machine may add to a deadline; no timing is tighter
EXIT_OK, EXIT_TIMEOUT = 0, 6
NOBODY = 65534
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
FLOCK = shutil.which("flock", path="/usr/bin:/bin:/usr/sbin:/sbin")
TRUE = shutil.which("true", path="/usr/bin:/bin")

as_nobody = pytest.param(
    NOBODY, id="other-user",
    marks=pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None,
                             reason="acting as another user needs root and setpriv; CI "
                             "runs these tests as root"))


@pytest.fixture
def lease_dir():
    """A lease directory every user can reach, made as an admin would."""
    shared = Path(tempfile.mkdtemp(prefix="gpukit-lease-lock-", dir="/tmp"))
    shared.chmod(0o755)
    leases = shared / "leases"
    leases.mkdir()
    leases.chmod(0o1777)
    yield leases
    shutil.rmtree(shared, ignore_errors=True)


@pytest.fixture
def rogue(lease_dir):
    """Starts flock(1) holding the directory's lock (as `uid`, or this user);
    returns (process, its user name) once the lock is held."""
    started = []

    def start(uid=None):
        # -o: only flock itself holds the lock, so killing it frees the lock.
        argv = [FLOCK, "-o", "--exclusive", str(lease_dir), "sh", "-c", "echo locked; exec cat"]
        if uid is not None:
            argv = [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True)
        started.append(process)
        assert process.stdout.readline() == "locked\n"
        user = pwd.getpwuid(os.geteuid() if uid is None else uid).pw_name
        return process, user

    if FLOCK is None:
        pytest.skip("flock(1) (util-linux) is missing")
    yield start
    for process in started:
        process.kill()
        process.wait()


def gpukit_env(tmp_path, lease_dir, **extra):
    (tmp_path / "empty-path").mkdir(exist_ok=True)
    return child_env(tmp_path, "h100x8", GPUKIT_LEASE_DIR=lease_dir, **extra)


PYTHON_RESERVE = """
import gpukit
try:
    gpukit.{call}
    print("no exception")
except TimeoutError as e:
    print("TimeoutError:", e)
"""


@pytest.mark.parametrize("uid", [pytest.param(None, id="same-user"), as_nobody])
def test_a_held_lock_stalls_nobody(tmp_path, lease_dir, rogue, uid):
    holder, user = rogue(uid)
    env = gpukit_env(tmp_path, lease_dir)
    inherited = dict(env, GPUKIT_LEASE="lease-1-00000000")  # as under gpukit run
    commands = {  # name: (argv, environment, deadline in seconds)
        "run --wait=2s": ([str(GPUKIT_CLI), "run", "--wait=2s", "--", TRUE], env, 2.0),
        "run": ([str(GPUKIT_CLI), "run", "--", TRUE], env, PATIENCE),
        "pick": ([str(GPUKIT_CLI), "pick"], env, PATIENCE),
        "leases": ([str(GPUKIT_CLI), "leases", "--json"], env, PATIENCE),
        "reserve()": ([sys.executable, "-c",
                       textwrap.dedent(PYTHON_RESERVE.format(call="reserve()"))], env, PATIENCE),
        "reserve(wait=2)": ([sys.executable, "-c",
                             textwrap.dedent(PYTHON_RESERVE.format(call="reserve(wait=2)"))],
                            env, 2.0),
        "current_reservation()": (
            [sys.executable, "-c",
             textwrap.dedent(PYTHON_RESERVE.format(call="current_reservation()"))],
            inherited, PATIENCE),
    }
    start = time.monotonic()
    running = {name: subprocess.Popen(argv, env=e, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name, (argv, e, _) in commands.items()}
    # Waited for in the order of their deadlines, so each one's end is seen
    # promptly; the timeout only keeps a broken build from hanging the suite.
    for name in sorted(running, key=lambda n: commands[n][2]):
        deadline = commands[name][2]
        out, err = running[name].communicate(timeout=deadline + 60)
        took = time.monotonic() - start
        assert took <= deadline + MARGIN, f"{name} took {took:.1f} s (deadline {deadline} s)"
        if name.startswith(("run", "pick", "leases")):
            assert running[name].returncode == EXIT_TIMEOUT, (name, out, err)
            message = err
        else:
            assert running[name].returncode == EXIT_OK, (name, out, err)
            assert out.startswith("TimeoutError:"), (name, out, err)
            message = out
        assert f"pid {holder.pid} (user {user}, command 'flock')" in message, (name, message)
        assert "kill it or ask its owner" in message and "GPUKIT_LEASE_DIR" in message
        assert str(lease_dir) in message
        if deadline == 2.0:
            assert took >= 2.0, f"{name} gave up after {took:.1f} s, before its --wait of 2 s"
    # Waiting without a limit waits for the lock too, saying who holds it,
    # and goes on once it is free.
    patient = subprocess.Popen([str(GPUKIT_CLI), "run", "--wait", "--", TRUE], env=env,
                               stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = patient.stderr.readline()
    assert "waiting for the lease directory's lock" in line and f"pid {holder.pid}" in line
    holder.kill()
    holder.wait()
    assert patient.wait(timeout=60) == EXIT_OK, patient.stderr.read()
