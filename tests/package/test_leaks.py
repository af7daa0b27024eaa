"""Nothing leaks: 10**5 rounds of creations, conversions, operators,
indexing, exports and failing calls leave the process's resident memory
flat, the reference counts of everything they touched where they were, and
the number of objects the garbage collector tracks unchanged.

A leaked Array keeps a reference to its heap type, and every Array holds
its dtype and device through .dtype/.device, so the reference counts of
gpukit.Array, the dtypes and the inputs catch a lost Py_DECREF at once; RSS
catches leaked C memory (gk_array structs, host buffers, DLPack managers).
Under AddressSanitizer (GPUKIT_SANITIZE) freed memory sits in quarantine,
so RSS is not checked there and fewer rounds run."""
import gc
import os
import pickle
import sys

import numpy as np
import pytest

import gpukit
from conftest import DEVICES

SANITIZE = os.environ.get("GPUKIT_SANITIZE", "0").upper() in ("1", "ON", "TRUE", "YES")
ROUNDS = 10_000 if SANITIZE else 100_000  # the number; a few seconds per test
ROUNDS_DEVICE = 500 if SANITIZE else 10_000  # each device op is a queued command
WARMUP = 1_000
# Growth allowed after the warm-up: allocator slack (pymalloc arenas, glibc
# bins; none at all was seen here). A leak of even one 32-byte block per
# round is 3 MiB at 10**5 rounds, and at 10**4 device rounds of 13 ops a
# leaked buffer (whose header alone is larger) per op is over 1 MiB.
RSS_SLACK = 2 * 1024 * 1024
RSS_SLACK_DEVICE = 1024 * 1024
PAGE = os.sysconf("SC_PAGE_SIZE")

GPU_DEVICES = [d for d in DEVICES if d != "cpu"]  # PoCL's OpenCL here, CUDA on a GPU


def rss():
    """Resident bytes of this process now (/proc/self/statm's second field)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def refcounts(objects):
    return [sys.getrefcount(o) for o in objects]


def assert_no_leak(body, rounds, watch=(), slack=RSS_SLACK):
    """Runs body() WARMUP times, then `rounds` times, and checks that RSS,
    the refcounts of `watch` (and of gpukit's types and dtypes) and the
    number of gc-tracked objects came back to the warm baseline."""
    watch = list(watch) + [gpukit.Array, gpukit.dtype, gpukit.device, gpukit.float32,
                           gpukit.float64, gpukit.int64, gpukit.int32, gpukit.bool, gpukit.uint8]
    for _ in range(min(WARMUP, rounds)):
        body()
    gc.collect()
    refs_before = refcounts(watch)
    tracked_before = len(gc.get_objects())
    rss_before = rss()
    for _ in range(rounds):
        body()
    gc.collect()
    rss_after = rss()
    tracked_after = len(gc.get_objects())
    refs_after = refcounts(watch)
    leaked = {repr(o)[:60]: after - before
              for o, before, after in zip(watch, refs_before, refs_after) if after != before}
    assert not leaked, f"references left behind after {rounds} rounds: {leaked}"
    # A few objects may appear for good (caches filled on first use are done
    # by the warm-up); one per round would be thousands.
    assert tracked_after - tracked_before < 50, \
        f"gc-tracked objects grew by {tracked_after - tracked_before} in {rounds} rounds"
    if not SANITIZE:
        grown = rss_after - rss_before
        assert grown < slack, f"RSS grew by {grown / 2**20:.1f} MiB in {rounds} rounds " \
                                  f"({grown / rounds:.0f} bytes a round)"


# --- the CPU -------------------------------------------------------------------


def test_creation_does_not_leak():
    numbers = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    ints = [1, 2, 3, 4]
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    like = gpukit.zeros((2, 3), dtype=gpukit.int32)

    def body():
        gpukit.asarray(numbers)
        gpukit.asarray(ints, dtype="float64")
        gpukit.asarray(2.5)
        gpukit.asarray(host)  # shares NumPy's memory
        gpukit.asarray(host, copy=True)
        gpukit.asarray(like)
        gpukit.zeros((4, 4))
        gpukit.ones(5, dtype=gpukit.int32)
        gpukit.empty((2, 2))
        gpukit.full((2, 2), 7)
        gpukit.arange(10)
        gpukit.arange(0.0, 1.0, 0.25)
        gpukit.linspace(0, 1, 5)
        gpukit.eye(3)
        gpukit.zeros_like(like)
        gpukit.full_like(like, 3)

    assert_no_leak(body, ROUNDS, [numbers, ints, host, like])


def test_conversions_do_not_leak():
    a = gpukit.asarray([[1.0, 2.0], [3.0, 4.0]])
    scalar = gpukit.asarray(3.0)
    flags = gpukit.asarray([True, False])

    def body():
        a.tolist()
        scalar.item()
        float(scalar)
        int(scalar)
        bool(scalar)
        a.numpy()
        np.asarray(a)
        a.astype("float64")
        a.astype(gpukit.float32, copy=False)
        a.to("cpu")
        a.to("cpu", copy=True)
        a.to(gpukit.int64)
        a.cpu()
        a.copy()
        flags.tolist()
        repr(a)
        pickle.loads(pickle.dumps(a))

    assert_no_leak(body, ROUNDS, [a, scalar, flags])


def test_operations_do_not_leak():
    a = gpukit.asarray([[1.0, 2.0], [3.0, 4.0]])
    b = gpukit.asarray([[0.5, 1.5], [2.5, 3.5]])
    v = gpukit.asarray([3, 1, 2])
    host = np.ones((2, 2), dtype=np.float32)

    def body():
        a + b
        a * 2
        1.5 - a
        a / b
        a ** 2
        a @ b
        -a
        abs(a)
        a < b
        a == 2.0
        a + host
        a + [1.0, 2.0]
        c = a.copy()
        c += b
        c *= 2
        gpukit.exp(a)
        gpukit.where(a > 2, a, b)
        gpukit.clip(a, 1.5, 3.0)
        a.sum()
        a.sum(axis=0)
        gpukit.mean(a, axis=(0, 1), keepdims=True)
        a.max()
        a.var(correction=1)
        gpukit.argmax(a)
        gpukit.sort(v)
        gpukit.argsort(v, descending=True)
        gpukit.cumulative_sum(v)
        a.reshape(4)
        a.T
        gpukit.matrix_transpose(a)
        gpukit.broadcast_to(v, (2, 3))

    assert_no_leak(body, ROUNDS, [a, b, v, host])


def test_indexing_does_not_leak():
    m = gpukit.arange(24, dtype=gpukit.float32).reshape(2, 3, 4)
    target = gpukit.zeros((3, 4))
    value = gpukit.ones(4)

    def body():
        m[0]
        m[1, 2]
        m[1, 2, 3]
        m[:, 1:3]
        m[..., ::2]
        m[None, 0, :, -1]
        for row in m[0]:
            pass
        target[0] = value
        target[1:, 1] = 2.5
        target[...] = 0
        len(m)

    assert_no_leak(body, ROUNDS, [m, target, value])


def test_exports_do_not_leak():
    """DLPack capsules consumed and not consumed (their deleter frees the
    manager), memoryviews, __array__, and imports of NumPy's memory."""
    a = gpukit.asarray([[1.0, 2.0], [3.0, 4.0]])
    host = np.arange(6, dtype=np.float64)

    def body():
        np.from_dlpack(a)
        a.__dlpack__()  # never consumed: the capsule's destructor frees it
        a.__dlpack__(max_version=(1, 0))
        a.__dlpack__(dl_device=(1, 0), copy=True)
        a.__dlpack_device__()
        with memoryview(a) as view:
            view.tobytes()
        a.__array__()
        a.__array__(dtype=np.float32)
        gpukit.from_dlpack(host)
        gpukit.from_dlpack(host, copy=True)
        gpukit.asarray(memoryview(host))

    assert_no_leak(body, ROUNDS, [a, host])


def test_failing_calls_do_not_leak():
    """Every error path releases what it made before raising."""
    a = gpukit.asarray([[1.0, 2.0], [3.0, 4.0]])
    b = gpukit.asarray([1.0, 2.0, 3.0])
    mixed = [1, "x"]
    ragged = [[1, 2], [3]]
    cases = [
        (TypeError, lambda: gpukit.asarray(mixed)),
        (ValueError, lambda: gpukit.asarray(ragged)),
        (ValueError, lambda: gpukit.zeros(-1)),
        (TypeError, lambda: gpukit.zeros(3, dtype="float128")),
        (ValueError, lambda: a + b),
        (ValueError, lambda: a.item()),
        (ValueError, lambda: a.reshape(3)),
        (IndexError, lambda: a[5]),
        (ValueError, lambda: a.sum(axis=3)),
        (ValueError, lambda: gpukit.asarray(a, copy=False, dtype="int32")),
        (ValueError, lambda: gpukit.zeros(2, device="nonsense")),
    ]

    def body():
        for error, call in cases:
            try:
                call()
            except error:
                pass
            else:
                raise AssertionError("expected an error")

    assert_no_leak(body, ROUNDS // 4, [a, b, mixed, ragged])


# --- OpenCL (PoCL here), and CUDA when the tests run on a GPU -------------------


@pytest.mark.parametrize("device", GPU_DEVICES or [pytest.param(
    "opencl", marks=pytest.mark.skip(reason="no OpenCL or CUDA device"))])
def test_device_arrays_do_not_leak(device):
    numbers = [1.0, 2.0, 3.0, 4.0]
    x = gpukit.asarray(numbers, device=device)
    y = gpukit.arange(4, dtype=gpukit.float32, device=device)
    host = gpukit.asarray([[1.0, 2.0], [3.0, 4.0]])
    twice = gpukit.ElementwiseKernel("float32 x", "float32 z", "z = 2.0f * x;", "twice")

    def body():
        gpukit.asarray(numbers, device=device)
        gpukit.zeros((2, 2), device=device)
        gpukit.arange(8, device=device)
        z = x + y
        z * 2.0
        z.sum().item()
        gpukit.mean(z)
        z.to("cpu")
        host.to(device)
        x.tolist()
        x[1:3]
        gpukit.sort(y, descending=True)
        twice(y)

    assert_no_leak(body, ROUNDS_DEVICE, [numbers, x, y, host, twice], RSS_SLACK_DEVICE)


# --- GPUs and reservations, against the fake NVML (in a child Python) ----------


GPU_QUERIES = """
    import gc, os, sys
    import gpukit

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def queries():
        for gpu in gpukit.gpus():
            gpu.processes, gpu.clocks, repr(gpu)
        gpukit.info()
        gpukit.driver_version()
        gpukit.cuda.device_count(), gpukit.cuda.mem_get_info(1), gpukit.cuda.get_device_name(0)
        gpukit.pick(2, order="util", min_free="1G")
        try:
            gpukit.pick(9)
        except gpukit.NoGPUError:
            pass

    def reservations():
        with gpukit.reserve(2, max_procs=8) as reservation:
            reservation.gpus, reservation.uuids, repr(reservation)
        gpukit.current_reservation()

    watch = [gpukit.GPU, gpukit.Process, gpukit.Reservation, gpukit.NoGPUError]
    for body in (queries, reservations):
        for _ in range(ROUNDS // 10):
            body()
        gc.collect()
        refs, tracked, before = [sys.getrefcount(o) for o in watch], len(gc.get_objects()), rss()
        for _ in range(ROUNDS):
            body()
        gc.collect()
        print([sys.getrefcount(o) for o in watch] == refs, len(gc.get_objects()) - tracked,
              rss() - before)
"""


def test_gpu_queries_do_not_leak(py):
    """gpus() (8 GPUs with processes), info(), gpukit.cuda, pick() and its
    NoGPUError, reserve() as a context manager: thousands of rounds leave
    no references, objects or memory behind."""
    rounds = 200 if SANITIZE else 3_000
    lines = py(GPU_QUERIES.replace("ROUNDS", str(rounds)), scenario="h100x8").stdout.splitlines()
    for what, line in zip(["queries", "reservations"], lines):
        refs_same, tracked, grown = line.split()
        assert refs_same == "True", f"{what}: references to GPU, Process or Reservation left behind"
        assert int(tracked) < 50, f"{what}: gc-tracked objects grew by {tracked}"
        # Not for reservations: each sets GPUKIT_LEASE in os.environ to a new
        # lease name, and glibc's setenv() keeps every value it was ever given
        # (about 100 bytes each; a plain os.environ loop does the same).
        if what == "queries" and not SANITIZE:
            # Each round makes 8 GPU objects and a snapshot of several kB.
            assert int(grown) < RSS_SLACK, \
                f"RSS grew by {int(grown) / 2**20:.1f} MiB in {rounds} rounds"
    assert len(lines) == 2, lines
