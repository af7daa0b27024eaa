"""The thread-safety rules gpukit.Array documents: different arrays may be
used from different threads at once; one array may be read from several
threads at once; long operations release the GIL, so a thread computing
does not stop the others. Checked on every device (the CPU and PoCL's
OpenCL here) against NumPy, with no timing thresholds: the GIL test makes
thread switches happen only where a thread gives the GIL up, so what it
observes does not depend on the machine's speed or load."""
import contextlib
import sys
import threading

import numpy as np
import pytest

import gpukit
from conftest import DEVICES

THREADS = 8
JOIN_TIMEOUT = 300  # seconds; only a hang reaches it


def run_threads(target, count=THREADS):
    """Runs target(k) in `count` threads started together; re-raises the
    first exception any of them raised."""
    barrier = threading.Barrier(count)
    errors = []

    def run(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as error:  # noqa: B902 (reported in the main thread)
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(k,), name=f"gpukit-test-{k}")
               for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not [t.name for t in threads if t.is_alive()], "threads did not finish (a hang)"
    if errors:
        raise errors[0]


def test_threads_compute_on_their_own_arrays(device):
    """Each thread makes its own arrays from its own data and computes
    with them; every result matches NumPy's. The matrices are large enough
    for the CPU to run them without the GIL, so the threads really overlap."""
    side = 320 if device == "cpu" else 96  # 102,400 elements: past the CPU's GIL-free size

    def work(k):
        rng = np.random.default_rng(k)
        x = rng.integers(-8, 8, size=(side, side)).astype(np.float64)
        v = rng.integers(0, 1000, size=side * 4, dtype=np.int64)
        for _ in range(3):
            a = gpukit.asarray(x, device=device)
            assert a.device == device
            np.testing.assert_allclose(np.asarray((a @ a).cpu()), x @ x, rtol=1e-12)
            np.testing.assert_array_equal(np.asarray(((a * 2 + k) - a).sum(axis=0).cpu()),
                                          (x + k).sum(axis=0))
            b = gpukit.asarray(v, device=device)
            np.testing.assert_array_equal(np.asarray(gpukit.sort(b).cpu()), np.sort(v))
            np.testing.assert_array_equal(np.asarray(gpukit.cumulative_sum(b).cpu()),
                                          np.cumsum(v))
            assert gpukit.max(b).item() == v.max()
            z = gpukit.zeros((side, 4), dtype=gpukit.int32, device=device) + k
            assert z.sum().item() == side * 4 * k

    run_threads(work)


def test_threads_read_one_array(device):
    """Several threads read one shared array at once (operand, reduction,
    copy to the CPU, tolist, views) and all see the same, right values; the
    array is unchanged afterwards."""
    host = np.arange(200 * 300, dtype=np.float64).reshape(200, 300) % 97  # exact sums
    shared = gpukit.asarray(host, device=device)
    total = float(host.sum())
    column_sums = host.sum(axis=0)
    rows = host.tolist()

    def read(k):
        for _ in range(5):
            assert shared.sum().item() == total
            np.testing.assert_array_equal(np.asarray(shared.sum(axis=0).cpu()), column_sums)
            np.testing.assert_array_equal(np.asarray(shared.to("cpu")), host)
            assert shared.tolist() == rows
            np.testing.assert_array_equal(np.asarray((shared + k).cpu()), host + k)
            np.testing.assert_array_equal(np.asarray(shared.T.copy().cpu()), host.T)
            assert shared[k, 1:4].tolist() == rows[k][1:4]

    run_threads(read)
    np.testing.assert_array_equal(np.asarray(shared.cpu()), host)


def test_threads_share_one_elementwise_kernel():
    """The first calls of one ElementwiseKernel from many threads at once
    (each may compile it, without the GIL) all work, and the kernel keeps
    one compiled program per device."""
    devices = [d for d in DEVICES if d != "cpu"]
    if not devices:
        pytest.skip("no CUDA or OpenCL device")
    saxpy = gpukit.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = 2.0f * x + y;",
                                     "thread_saxpy")

    def call(k):
        device = devices[k % len(devices)]
        x = gpukit.arange(1000, dtype=gpukit.float32, device=device)
        y = gpukit.full(1000, float(k), dtype=gpukit.float32, device=device)
        np.testing.assert_array_equal(np.asarray(saxpy(x, y).cpu()),
                                      2 * np.arange(1000, dtype=np.float32) + k)

    run_threads(call)
    assert sorted(map(str, saxpy.compiled_devices)) == sorted(devices)


def test_random_sequence_is_shared_safely():
    """Threads drawing from the module's seed sequence at once take each
    seed exactly once: after seed(n), the arrays they get are the arrays one
    thread would get, in some order."""
    draws = 10
    gpukit.random.seed(1234)
    expected = sorted(tuple(gpukit.random.uniform(4).tolist()) for _ in range(THREADS * draws))
    gpukit.random.seed(1234)
    got = []
    lock = threading.Lock()

    def draw(k):
        mine = [tuple(gpukit.random.uniform(4).tolist()) for _ in range(draws)]
        with lock:
            got.extend(mine)

    run_threads(draw)
    assert sorted(got) == expected


@contextlib.contextmanager
def switches_only_when_given_up():
    """Makes Python switch threads only where a thread gives the GIL up
    (blocking calls, C code that releases it), never on a timer."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


LONG_OPS = {
    "matmul": lambda a: a @ a,
    "sum": lambda a: a.sum(axis=0),
    "sort": lambda a: gpukit.sort(a, axis=1),
    "to_cpu": lambda a: a.to("cpu", copy=True),
}


def observe_main_running(work):
    """Runs work() in a worker thread while timed switches are off; returns
    (whether the main thread ran while work() had not returned, how many
    steps of Python the main thread took meanwhile, work()'s result).

    The main thread, woken by the worker's `started`, needs the GIL to go on,
    and only the worker can give it up. If work() kept the GIL, the main
    thread's first chance would come after work() returned, when `finished`
    is set. The main thread running while `finished` is unset therefore
    shows that work() gave the GIL up and let it run."""
    started, finished = threading.Event(), threading.Event()
    results = []

    def worker():
        started.set()  # the main thread wakes, but must wait for the GIL
        results.append(work())
        finished.set()

    progress = 0
    with switches_only_when_given_up():
        thread = threading.Thread(target=worker)
        thread.start()
        started.wait()
        ran_during_work = not finished.is_set()
        while ran_during_work and progress < 1000 and not finished.is_set():
            progress += 1  # Python work, done while the worker computes
        # Nothing can end work() while the main thread holds the GIL.
        assert finished.is_set() == (not ran_during_work)
        finished.wait()  # gives the GIL up, so the worker can return
        thread.join(JOIN_TIMEOUT)
    return ran_during_work, progress, results[0]


@pytest.mark.parametrize("op", LONG_OPS)
def test_long_operation_releases_the_gil(device, op):
    """A thread in a long operation (on a device: until its result is on the
    CPU) does not stop the main thread from running Python."""
    side = 512  # 262,144 elements: long work on the CPU too
    a = gpukit.asarray(np.arange(side * side, dtype=np.float32).reshape(side, side) % 13,
                       device=device)
    expected = np.asarray(LONG_OPS[op](a).cpu())  # also compiles any kernel beforehand
    # A GIL released for the whole op always lets the main thread in, unless
    # the OS did not run it at all meanwhile (a loaded machine): a few tries
    # make that unlikely, and a GIL that is kept fails every one of them.
    for _ in range(5):
        ran, progress, result = observe_main_running(lambda: LONG_OPS[op](a).cpu())
        np.testing.assert_array_equal(np.asarray(result), expected)
        if ran:
            break
    assert ran, f"{op} on {device} kept the GIL: the main thread could not run until it had " \
                "finished"
    assert progress == 1000


def test_threads_query_gpus_at_once(py):
    """gpus(), pick() and gpukit.cuda from 8 threads at once (NVML is kept
    open between calls, one reader at a time) give what one thread gets."""
    out = py("""
        import threading
        import gpukit

        def facts():
            return ([(g.index, g.uuid, g.memory_used, len(g.processes or [])) for g in gpukit.gpus()],
                    [g.index for g in gpukit.pick(3, order="index")],
                    gpukit.cuda.device_count(), gpukit.cuda.mem_get_info(2))

        expected = facts()
        barrier = threading.Barrier(8)
        failures = []

        def run():
            barrier.wait()
            for _ in range(30):
                got = facts()
                if got != expected:
                    failures.append(got)

        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(len(expected[0]), len(failures))
    """, scenario="h100x8").stdout.split()
    assert out == ["8", "0"]


def test_complex_eigvalsh_in_a_thread(py):
    """Debian's LAPACK reads up to n elements past the workspace heevd asks
    for when it computes eigenvalues only; in a Python thread, whose heap
    is small, that faulted (5 runs of 5 for 512 x 512 complex64). gpukit
    gives it its own, padded workspace. Run in a child: a fault kills it."""
    py("""
        import threading
        import numpy as np
        import gpukit

        rng = np.random.default_rng(0)
        results = {}

        def run(n, dtype, device):
            a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
            h = ((a + a.conj().T) / 2).astype(dtype)
            got = gpukit.linalg.eigvalsh(gpukit.asarray(h, device=device))
            results[n, dtype, device] = (np.asarray(got), np.linalg.eigvalsh(h))

        for device in gpukit.devices():
            for n, dtype in [(512, "complex64"), (200, "complex128"), (3, "complex64")]:
                thread = threading.Thread(target=run, args=(n, dtype, device))
                thread.start()
                thread.join()
        for (n, dtype, device), (got, expected) in results.items():
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-3 if dtype == "complex64"
                                       else 1e-10, err_msg=f"{n} {dtype} {device}")
        assert len(results) == 3 * len(gpukit.devices())
    """)


def test_openblas_thread_count_set_during_a_pause_is_kept(py):
    """A stack of small matrices holds OpenBLAS to one thread while it runs
    and restores the count after; a count another thread sets meanwhile
    (openblas_set_num_threads, as threadpoolctl does) is kept."""
    py("""
        import ctypes, threading
        import numpy as np
        import gpukit
        from gpukit import linalg

        stack = gpukit.asarray(np.random.default_rng(0).standard_normal((400000, 4, 4))
                               + 4 * np.eye(4))
        linalg.inv(stack[:10])  # LAPACKE and its OpenBLAS loaded
        openblas = ctypes.CDLL("libopenblas.so.0")  # the one gpukit's LAPACKE runs on
        if openblas.openblas_get_parallel() != 1 or openblas.openblas_get_num_threads() == 1:
            raise SystemExit(0)  # nothing is paused: an OpenMP or one-thread build
        worker = threading.Thread(target=linalg.inv, args=(stack,))
        worker.start()
        paused = False
        while worker.is_alive() and not paused:
            paused = openblas.openblas_get_num_threads() == 1
        if paused:
            openblas.openblas_set_num_threads(3)
        worker.join()
        assert paused, "the stack ended before its pause was seen"
        assert openblas.openblas_get_num_threads() == 3, openblas.openblas_get_num_threads()
    """)
