"""gpukit.pick(), gpukit.reserve() and current_reservation(): the selection
of `gpukit pick` and the leases of `gpukit run`, from Python processes
against the fake NVML, each test with its own lease directory.

Processes that must hold a reservation while the test looks are started
with Popen and talk over pipes: a child prints one line when it holds (or
has failed), then waits for its stdin to close."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import FAKE_CUDA, GPUKIT_CLI, child_env

UUID = {
    0: "GPU-2bdfff79-02da-4552-8376-7ccb112dc656",
    3: "GPU-e184d64f-6a57-4c38-bb05-774e6080de8b",
    5: "GPU-41d110c0-c9cc-48ff-ac80-84e2d0ec21a4",
    6: "GPU-41f31581-2ed2-4822-b893-267c7ee27b7b",
}
LAPTOP = "GPU-7ec8d242-802d-49a1-b45f-14708324397e"

# Reserves with the keywords in argv[1] (JSON), prints "ok <uuids>" or the
# exception's type, then holds until stdin closes.
HOLDER = """
import json, sys, gpukit
try:
    r = gpukit.reserve(**json.loads(sys.argv[1]))
    print("ok", ",".join(r.uuids), flush=True)
except Exception as e:
    print(type(e).__name__, e, flush=True)
sys.stdin.read()
"""


def start(tmp_path, code, *args, scenario="laptop", **extra):
    (tmp_path / "empty-path").mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args],
                            env=child_env(tmp_path, scenario, **extra), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def holder(tmp_path, scenario="laptop", **kwargs):
    """A child that reserved (or failed to); returns (process, its first line)."""
    child = start(tmp_path, HOLDER, json.dumps(kwargs), scenario=scenario)
    return child, child.stdout.readline().strip()


def finish(child):
    child.stdin.close()
    child.wait(timeout=30)


def lease_files(tmp_path):
    directory = tmp_path / "leases"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def wait_for(condition, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def test_pick_with_each_option(py):
    py("""
        import gpukit
        def idx(**kw):
            return [g.index for g in gpukit.pick(**kw)]
        assert idx() == [3]                       # most free memory
        assert idx(count=2) == [3, 6] and [g.index for g in gpukit.pick(2)] == [3, 6]
        assert idx(order="index") == [0]
        assert idx(order="util", count=2) == [3, 6]
        assert idx(order="power", count=2) == [3, 6]
        assert idx(order="free-ratio") == [3]
        assert idx(min_free="70G", count=2) == idx(min_free=70 * 2**30, count=2) == [3, 6]
        assert idx(min_free_ratio=0.9) == idx(min_free_ratio="90%") == [3]
        assert idx(max_util=20, count=2, order="index") == [3, 6]
        assert idx(max_procs=0) == [3]
        assert idx(min_total="79G", order="index") == [0]
        assert idx(gpus=[0, 1]) == [0] and idx(gpus="1,0", order="index") == [0]
        assert idx(gpus=[UUID5]) == idx(gpus=UUID5[:12]) == [5]
        assert idx(exclude=[3]) == [6] and idx(exclude="3,6") == [4]
        assert idx(share=True) == [3]
        shuffled = idx(count=8, order="random", seed=7)
        assert shuffled == idx(count=8, order="random", seed=7) and sorted(shuffled) == list(range(8))
        g = gpukit.pick()[0]
        assert type(g) is gpukit.GPU and g.cuda_index == 3 and g.memory_total == 81559 * 2**20
        assert gpukit.current_reservation() is None  # picking reserves nothing
    """.replace("UUID5", repr(UUID[5])), scenario="h100x8")


def test_pick_errors(py):
    py("""
        import gpukit
        def fails(kind, text, **kw):
            try:
                gpukit.pick(**kw)
            except kind as e:
                assert text in str(e), (kw, str(e))
            else:
                raise AssertionError(f"pick({kw}) did not raise {kind.__name__}")
        fails(ValueError, "min_free: '20X' has an unknown unit", min_free="20X")
        fails(ValueError, "min_total:", min_total="-1G")
        fails(ValueError, "order: unknown order 'best'", order="best")
        fails(ValueError, "count: give a whole number from 1 to 64", count=0)
        fails(ValueError, "count:", count=65)
        fails(ValueError, "max_util: give a percentage", max_util=101)
        fails(ValueError, "max_procs:", max_procs=-1)
        fails(ValueError, "min_free_ratio: '1.5' is more than 100%", min_free_ratio=1.5)
        fails(ValueError, "min_free_ratio:", min_free_ratio="lots")
        fails(ValueError, "there is no GPU 9", gpus=[9])
        fails(ValueError, "is neither a GPU index", exclude="x")
        fails(TypeError, "count must be an int", count="2")
        fails(TypeError, "count must be an int", count=True)
        fails(TypeError, "min_free must be bytes", min_free=2.5e9)
        fails(TypeError, "a GPU is an index or a UUID", gpus=[1.5])
        fails(TypeError, "invalid keyword", wait=3)   # pick never waits
        fails(gpukit.NoGPUError, "wanted 3 device(s), 2 fit", count=3, min_free="70G")
        fails(gpukit.NoGPUError, "", min_total="100G")
        try:
            gpukit.reserve(wait=-1)
        except ValueError as e:
            assert "wait:" in str(e)
        try:
            gpukit.reserve(wait="soon")
        except ValueError as e:
            assert "wait:" in str(e)
        assert gpukit.current_reservation() is None
    """, scenario="h100x8")


def test_no_gpu_and_driver_faults(py):
    for scenario in (None, "empty"):
        out = py("""
            import gpukit
            for f in (gpukit.pick, gpukit.reserve):
                try:
                    f()
                except gpukit.NoGPUError as e:
                    print("NoGPUError")
        """, scenario=scenario).stdout.split()
        assert out == ["NoGPUError", "NoGPUError"], scenario
    out = py("""
        import gpukit
        try:
            gpukit.reserve()
        except gpukit.NoGPUError:
            print("wrong: a failing driver is not 'no GPU'")
        except gpukit.GPUError as e:
            print("GPUError", e)
    """, scenario="driver_not_loaded").stdout
    assert out.startswith("GPUError")


def test_unsafe_lease_directory(py, tmp_path):
    leases = tmp_path / "leases"
    leases.mkdir()
    os.chmod(leases, 0o777)  # writable by everyone, no sticky bit
    out = py("""
        import gpukit
        try:
            gpukit.reserve()
        except PermissionError as e:
            print("PermissionError", e)
    """, scenario="laptop").stdout
    assert out.startswith("PermissionError") and "sticky" in out


def test_reserve_sets_the_environment_and_release_restores_it(py):
    py("""
        import gc, os, subprocess, sys, gpukit
        os.environ["CUDA_DEVICE_ORDER"] = "FASTEST_FIRST"
        r = gpukit.reserve(min_free="70G", count=2)
        assert r.uuids == (UUID3, UUID6) and [g.index for g in r.gpus] == [3, 6]
        assert [g.cuda_index for g in r.gpus] == [0, 1]  # as CUDA programs will number them
        assert os.environ["CUDA_VISIBLE_DEVICES"] == f"{UUID3},{UUID6}"
        assert os.environ["NVIDIA_VISIBLE_DEVICES"] == f"{UUID3},{UUID6}"
        assert os.environ["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
        assert os.environ["GPUKIT_LEASE"] == r.lease and r.request == "2 GPUs, --min-free 70.0 GiB"
        assert not r.released and not r.inherited and abs(r.since - __import__("time").time()) < 60
        assert "GPUs 3, 6" in repr(r) and "held" in repr(r)
        # Programs started from here see it (C's environment too, not just os.environ).
        out = subprocess.run(["sh", "-c", "echo $CUDA_VISIBLE_DEVICES"], capture_output=True,
                             text=True).stdout.strip()
        assert out == f"{UUID3},{UUID6}"
        assert [g.cuda_index for g in gpukit.gpus() if g.cuda_index is not None] == [0, 1]
        # Held: nobody else gets those GPUs, even with the result dropped.
        lease = r.lease
        del r
        gc.collect()
        assert gpukit.current_reservation().lease == lease
        outsider = {k: v for k, v in os.environ.items() if k != "GPUKIT_LEASE"}
        other = subprocess.run([sys.executable, "-c", "import gpukit; gpukit.pick()"],
                               env=outsider, capture_output=True, text=True)
        assert other.returncode == 1 and "reserved by pid" in other.stderr, other.stderr
        # This process and its programs share out its own GPUs (as a gpukit
        # run inside a gpukit run job does).
        assert [g.index for g in gpukit.pick()] == [3]
        r = gpukit.current_reservation()
        r.release()
        assert r.released and "released" in repr(r)
        assert os.environ["CUDA_DEVICE_ORDER"] == "FASTEST_FIRST"
        for name in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "GPUKIT_LEASE"):
            assert name not in os.environ, name
        assert gpukit.current_reservation() is None
        r.release()  # again: nothing happens
        # A with block; a variable changed inside is the user's and stays.
        os.environ["CUDA_VISIBLE_DEVICES"] = "3,5,6"
        with gpukit.reserve(order="index") as r:
            assert r.uuids == (UUID3,) and os.environ["CUDA_VISIBLE_DEVICES"] == UUID3
            os.environ["CUDA_DEVICE_ORDER"] = "mine"
        assert r.released and os.environ["CUDA_VISIBLE_DEVICES"] == "3,5,6"
        assert os.environ["CUDA_DEVICE_ORDER"] == "mine"
    """.replace("UUID3", repr(UUID[3])).replace("UUID6", repr(UUID[6])), scenario="h100x8")


def test_held_until_release_and_seen_by_others(tmp_path):
    first, line = holder(tmp_path, "h100x8", min_free="70G")
    assert line == f"ok {UUID[3]}"
    holding = [f for f in lease_files(tmp_path) if f.startswith("lease-")]
    assert len(holding) == 1
    # Another process skips GPU 3; the command sees the Python lease too.
    second, line = holder(tmp_path, "h100x8", min_free="70G")
    assert line == f"ok {UUID[6]}"
    third, line = holder(tmp_path, "h100x8", min_free="70G")
    assert line.startswith("NoGPUError")
    leases = subprocess.run([str(GPUKIT_CLI), "leases", "--json"], capture_output=True,
                            text=True, env=child_env(tmp_path, "h100x8"), timeout=30)
    listed = json.loads(leases.stdout)
    listed = listed["leases"] if isinstance(listed, dict) else listed
    assert sorted(d["uuid"] for entry in listed for d in entry["devices"]) == \
        sorted([UUID[3], UUID[6]])
    for child in (first, second, third):
        finish(child)
    # A clean exit removes the lease files.
    assert [f for f in lease_files(tmp_path) if f.startswith("lease-")] == []


def test_same_request_again_returns_it_and_another_raises(py):
    py("""
        import gpukit
        r = gpukit.reserve(min_free="1G")
        assert gpukit.reserve(min_free="1G") is r      # a notebook cell run again
        assert gpukit.reserve() is r                  # nothing more than the count
        try:
            gpukit.reserve(count=2)
        except RuntimeError as e:
            assert "already holds GPU 3" in str(e) and "release()" in str(e), e
        else:
            raise AssertionError("a second reservation was taken")
        r.release()
        r2 = gpukit.reserve(count=2)
        assert r2 is not r and len(r2.uuids) == 2
    """, scenario="h100x8")


def test_a_with_block_ends_only_the_reservation_it_made(py):
    py("""
        import os, gpukit
        with gpukit.reserve() as outer:
            with gpukit.reserve() as inner:       # the same reservation, nested
                assert inner is outer
            assert not outer.released and gpukit.current_reservation() is outer
            assert os.environ["CUDA_VISIBLE_DEVICES"] == outer.uuids[0]
        assert outer.released and gpukit.current_reservation() is None
        held = gpukit.reserve()                   # the top of a notebook
        with gpukit.reserve():                    # a later cell
            pass
        assert not held.released and gpukit.current_reservation() is held
        held.release()                            # release() always ends it
        assert held.released and "CUDA_VISIBLE_DEVICES" not in os.environ
    """, scenario="h100x8")


def test_threads_reserving_at_once_share_one_reservation(py, tmp_path):
    """A process holds one reservation: 8 threads asking at the same moment
    on the 8-GPU fake all get it, and only one GPU is leased."""
    out = py("""
        import threading, gpukit
        start, got = threading.Barrier(8), []
        def ask():
            start.wait()
            got.append(gpukit.reserve())
        threads = [threading.Thread(target=ask) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(len(got), len({id(r) for r in got}), got[0].uuids[0])
    """, scenario="h100x8").stdout.split()
    assert out[:2] == ["8", "1"]
    assert len(lease_files(tmp_path)) == 0  # released at the child's exit


def test_sigkill_ends_the_reservation(tmp_path):
    first, line = holder(tmp_path)
    assert line == f"ok {LAPTOP}"
    second, line = holder(tmp_path)
    assert line.startswith("NoGPUError") and "reserved by pid" in line
    finish(second)
    first.kill()
    first.wait()
    third, line = holder(tmp_path)
    assert line == f"ok {LAPTOP}"
    finish(third)


def test_programs_started_by_a_reserving_process_do_not_keep_its_lease(tmp_path):
    """The lease descriptor is close-on-exec: a long-lived program started
    from a notebook must not hold the GPU after the notebook has ended."""
    parent = start(tmp_path, """
        import subprocess, sys, gpukit
        gpukit.reserve()
        # close_fds=False: what os.system, os.posix_spawn and C libraries do
        child = subprocess.Popen(["sleep", "60"], close_fds=False)
        print(child.pid, flush=True)
        sys.stdin.read()
    """)
    sleeper = int(parent.stdout.readline())
    try:
        parent.kill()
        parent.wait()
        os.kill(sleeper, 0)  # still running
        again, line = holder(tmp_path)
        assert line == f"ok {LAPTOP}"
        finish(again)
    finally:
        os.kill(sleeper, signal.SIGKILL)


def test_many_processes_at_once_never_share_a_gpu(tmp_path):
    """50 Pythons reserve at the same moment on 8 GPUs: 8 get one each, the
    other 42 get NoGPUError."""
    go = tmp_path / "go"
    code = """
        import os, sys, time, gpukit
        print("ready", flush=True)
        while not os.path.exists(sys.argv[1]):
            time.sleep(0.005)
        try:
            print("ok", gpukit.reserve().uuids[0], flush=True)
        except gpukit.NoGPUError:
            print("busy", flush=True)
        sys.stdin.read()
    """
    children = [start(tmp_path, code, str(go), scenario="h100x8") for _ in range(50)]
    try:
        for child in children:
            assert child.stdout.readline().strip() == "ready"
        go.touch()
        results = [child.stdout.readline().split() for child in children]
    finally:
        for child in children:
            finish(child)
    got = sorted(r[1] for r in results if r[0] == "ok")
    assert len(got) == 8 and len(set(got)) == 8
    assert sum(r == ["busy"] for r in results) == 42


def test_wait_times_out(tmp_path):
    first, line = holder(tmp_path)
    assert line.startswith("ok")
    for wait in (0.3, "0.3s"):
        waiter, line = holder(tmp_path, wait=wait)
        assert line.startswith("TimeoutError") and "waited" in line, line
        finish(waiter)
    finish(first)
    assert [f for f in lease_files(tmp_path) if f.startswith("wait-")] == []


def test_wait_gets_the_gpu_when_it_is_released(tmp_path):
    first, line = holder(tmp_path)
    assert line.startswith("ok")
    waiter = start(tmp_path, HOLDER, json.dumps({"wait": "1m"}))
    wait_for(lambda: any(f.startswith("wait-") for f in lease_files(tmp_path)))
    finish(first)
    assert waiter.stdout.readline().strip() == f"ok {LAPTOP}"
    assert "gpukit.reserve: waiting for 1 GPU" in waiter.stderr.readline()
    finish(waiter)


@pytest.mark.parametrize("ahead", [0, 1])
def test_ctrl_c_stops_a_wait_and_leaves_nothing(tmp_path, ahead):
    """SIGINT (Ctrl-C, Jupyter's interrupt) while waiting with no limit:
    KeyboardInterrupt, and no lease or waiter record of the child is left,
    whether it was first in line (polling the GPUs) or behind another."""
    first, line = holder(tmp_path)
    assert line.startswith("ok")
    others = [start(tmp_path, HOLDER, json.dumps({"wait": None})) for _ in range(ahead)]
    wait_for(lambda: sum(f.startswith("wait-") for f in lease_files(tmp_path)) == ahead)
    waiter = start(tmp_path, """
        import gpukit
        try:
            gpukit.reserve(wait=None)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", gpukit.current_reservation(), flush=True)
    """)
    wait_for(lambda: any(f.startswith("wait-") and f.endswith(f"-{waiter.pid}")
                         for f in lease_files(tmp_path)))
    waiter.send_signal(signal.SIGINT)
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and out.strip() == "KeyboardInterrupt None", err
    assert not any(f.endswith(f"-{waiter.pid}") or f"-{waiter.pid}-" in f
                   for f in lease_files(tmp_path))
    for child in others:
        child.kill()
        child.wait()
    finish(first)


def test_current_reservation_inside_gpukit_run(tmp_path):
    code = """
        import json, os, gpukit
        r = gpukit.current_reservation()
        out = {"inherited": r.inherited, "uuids": r.uuids, "request": r.request,
               "gpus": [g.index for g in r.gpus], "cuda_index": [g.cuda_index for g in r.gpus],
               "lease": r.lease == os.environ["GPUKIT_LEASE"], "repr": repr(r)}
        out["same"] = gpukit.reserve(min_free="20G") is not None
        out["bare"] = gpukit.reserve().lease == r.lease
        try:
            gpukit.reserve(count=2)
        except RuntimeError as e:
            out["more"] = str(e)
        r.release()  # belongs to gpukit run: left alone
        out["after_release"] = gpukit.current_reservation().lease == r.lease
        print(json.dumps(out))
    """
    (tmp_path / "empty-path").mkdir(exist_ok=True)
    env = child_env(tmp_path, "h100x8")
    result = subprocess.run([str(GPUKIT_CLI), "run", "--min-free", "20G", "--", sys.executable,
                             "-c", textwrap.dedent(code)], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["inherited"] is True and out["uuids"] == [UUID[3]] and out["gpus"] == [3]
    assert out["cuda_index"] == [0] and out["lease"] is True
    assert out["request"] == "1 GPU, --min-free 20.0 GiB" and "inherited" in out["repr"]
    assert out["same"] and out["bare"] and out["after_release"]
    assert "already holds GPU 3" in out["more"] and "gpukit run" in out["more"]
    # Outside, or once the lease is gone, there is none.
    outside = subprocess.run([sys.executable, "-c",
                              "import gpukit; print(gpukit.current_reservation())"],
                             env=env, capture_output=True, text=True, timeout=60)
    assert outside.stdout.strip() == "None"
    env["GPUKIT_LEASE"] = "lease-1-00000000"
    stale = subprocess.run([sys.executable, "-c",
                            "import gpukit; print(gpukit.current_reservation())"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert stale.stdout.strip() == "None"


def test_warns_when_cuda_is_already_initialised(py):
    out = py(f"""
        import ctypes, warnings, gpukit
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gpukit.reserve().release()
            assert caught == [], [str(w.message) for w in caught]
            ctypes.CDLL({str(FAKE_CUDA)!r})  # what importing and using torch.cuda does
            r = gpukit.reserve()
        assert len(caught) == 1 and caught[0].category is RuntimeWarning
        assert "cannot take effect" in str(caught[0].message)
        assert r.uuids  # reserved all the same: programs started from here use it
        print("ok")
    """, scenario="laptop").stdout
    assert out.strip() == "ok"


def test_docstrings_and_signatures():
    import inspect
    import gpukit
    for f in (gpukit.pick, gpukit.reserve, gpukit.current_reservation,
              gpukit.Reservation.release):
        assert f.__doc__ and len(f.__doc__) > 60, f
    assert "wait" in inspect.signature(gpukit.reserve).parameters
    assert list(inspect.signature(gpukit.pick).parameters)[:2] == ["count", "order"]
    for name in ("gpus", "uuids", "since", "lease", "request", "released", "inherited"):
        assert getattr(gpukit.Reservation, name).__doc__, name
