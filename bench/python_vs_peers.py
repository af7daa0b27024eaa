"""Benchmark: the gpukit Python package against its peers, in one run.

  add_small    a + b of two 1,000-element float32 CPU arrays (NumPy: the
               same on ndarrays); target: gpukit's time <= 1.5x NumPy's
  create_small zeros(16) created and freed (NumPy: np.zeros(16,
               dtype=float32)); target <= 2x NumPy's
  add_large    a + b of 2^25 float32 (NumPy the same); target: gpukit
               >= 1.5x faster than NumPy, as the C library is
  gpus         gpukit.gpus() on the 8-GPU fake NVML against the same fields
               read with pynvml (nvidia-ml-py) in the same process;
               target >= 10x faster
  import       `python -c "import gpukit"` against `python -c "import numpy"`
               as whole processes; target: no slower
  dlpack_cpu   a zero-copy DLPack export of a CPU array, and
               np.from_dlpack() of it, against NumPy's own (no target: for
               scale)
  dlpack       the zero-copy DLPack export on each CUDA GPU when there is
               one (target < 10 us), and CuPy's a + b beside ours when CuPy
               imports

Each case takes the best and the median of --repeat rounds of timeit loops
and prints the spread (min..max of the rounds). Ratios are peer / gpukit
time: above 1 gpukit is faster. Nothing here is a pass/fail test.

    .venv/bin/python bench/python_vs_peers.py [--build DIR] [--repeat 7]

Run it on a quiet machine (taskset -c 1 helps on a shared one); the load
average is printed with the results.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rounds(statement, setup_globals, repeat, number=None):
    """Per-call seconds of `repeat` timeit rounds (number chosen to take
    ~0.2 s a round when not given)."""
    timer = timeit.Timer(statement, globals=setup_globals)
    if number is None:
        number, _ = timer.autorange()
        number = max(1, number)
    return [t / number for t in timer.repeat(repeat, number)]


def describe(name, ours, peer, peer_name, target):
    ratio = statistics.median(peer) / statistics.median(ours)
    verdict = "" if target is None else \
        f"  target >= {target:g}x: {'met' if ratio >= target else 'MISSED'}"
    print(f"{name:13s} gpukit {statistics.median(ours) * 1e6:10.2f} us "
          f"[{min(ours) * 1e6:.2f}..{max(ours) * 1e6:.2f}]   {peer_name} "
          f"{statistics.median(peer) * 1e6:10.2f} us [{min(peer) * 1e6:.2f}..{max(peer) * 1e6:.2f}]"
          f"   ratio {ratio:6.2f}x{verdict}")


def bench_arrays(gk, np, repeat):
    a, b = gk.ones(1000, dtype="float32"), gk.ones(1000, dtype="float32")
    na, nb = np.ones(1000, dtype=np.float32), np.ones(1000, dtype=np.float32)
    ours = rounds("a + b", {"a": a, "b": b}, repeat)
    peer = rounds("a + b", {"a": na, "b": nb}, repeat)
    # gpukit within 1.5x of NumPy's time: NumPy time / ours >= 1/1.5.
    describe("add_small", ours, peer, "numpy", 1 / 1.5)
    ours = rounds("zeros(16, dtype='float32')", {"zeros": gk.zeros}, repeat)
    peer = rounds("zeros(16, dtype=f32)", {"zeros": np.zeros, "f32": np.float32}, repeat)
    describe("create_small", ours, peer, "numpy", 1 / 2)
    n = 1 << 25
    a, b = gk.ones(n, dtype="float32"), gk.ones(n, dtype="float32")
    na, nb = np.ones(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    ours = rounds("a + b", {"a": a, "b": b}, repeat, number=5)
    peer = rounds("a + b", {"a": na, "b": nb}, repeat, number=5)
    describe("add_large", ours, peer, "numpy", 1.5)


def bench_gpus(build, repeat):
    """In a child process, with the fake 8-GPU NVML loaded by both."""
    code = f"""
import pwd, statistics, timeit, pynvml, gpukit
pynvml.nvmlInit()
def n_a(f, *args):  # what gpukit reports as None
    try:
        return f(*args)
    except pynvml.NVMLError:
        return None
def describe(pid):  # gpukit's Process has the user and command, as gpustat's has
    try:
        with open(f"/proc/{{pid}}/status") as f:
            uid = next(int(l.split()[1]) for l in f if l.startswith("Uid:"))
        with open(f"/proc/{{pid}}/cmdline", "rb") as f:
            command = f.read().split(bytes(1))[0].decode()
        return pwd.getpwuid(uid).pw_name, command
    except (OSError, KeyError, StopIteration):
        return None, None
def with_pynvml():
    out = []
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        m = n_a(pynvml.nvmlDeviceGetMemoryInfo, h)
        u = n_a(pynvml.nvmlDeviceGetUtilizationRates, h)
        procs = n_a(pynvml.nvmlDeviceGetComputeRunningProcesses, h) or []
        power = n_a(pynvml.nvmlDeviceGetPowerUsage, h)
        limit = n_a(pynvml.nvmlDeviceGetEnforcedPowerLimit, h)
        out.append((i, n_a(pynvml.nvmlDeviceGetUUID, h), n_a(pynvml.nvmlDeviceGetName, h),
                    m and m.total, m and m.used, m and m.free, u and u.gpu,
                    n_a(pynvml.nvmlDeviceGetTemperature, h, pynvml.NVML_TEMPERATURE_GPU),
                    n_a(pynvml.nvmlDeviceGetFanSpeed, h), power and power / 1000,
                    limit and limit / 1000, [(p.pid, p.usedGpuMemory, describe(p.pid)) for p in procs]))
    return out
assert len(with_pynvml()) == len(gpukit.gpus()) == 8
for name, f in (("gpukit", gpukit.gpus), ("pynvml", with_pynvml)):
    t = timeit.Timer(f)
    n, _ = t.autorange()
    print(name, *[x / n for x in t.repeat({repeat}, n)])
"""
    env = dict(os.environ,
               GPUKIT_NVML_LIBRARY=str(build / "tests/fake_nvml/libnvidia-ml.so.1"),
               FAKE_NVML_SCENARIO=str(ROOT / "tests/scenarios/h100x8.scn"),
               LD_LIBRARY_PATH=str(build / "tests/fake_nvml"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        print("gpus: failed:", out.stderr.strip().splitlines()[-1:])
        return
    times = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out.stdout.splitlines()}
    describe("gpus", times["gpukit"], times["pynvml"], "pynvml", 10)


def bench_import(repeat):
    def once(module):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        return time.perf_counter() - start
    ours, peer = [], []
    for _ in range(max(repeat, 5)):
        ours.append(once("gpukit"))
        peer.append(once("numpy"))
    describe("import", ours, peer, "numpy", 1.0)


def bench_dlpack_cpu(gk, np, repeat):
    """A zero-copy DLPack export of a CPU array, against NumPy's own."""
    x, nx = gk.ones((1024, 1024), dtype="float32"), np.ones((1024, 1024), dtype=np.float32)
    ours = rounds("x.__dlpack__(max_version=(1, 0))", {"x": x}, repeat)
    peer = rounds("x.__dlpack__(max_version=(1, 0))", {"x": nx}, repeat)
    describe("dlpack_cpu", ours, peer, "numpy", None)
    ours = rounds("from_dlpack(x)", {"x": x, "from_dlpack": np.from_dlpack}, repeat)
    peer = rounds("from_dlpack(x)", {"x": nx, "from_dlpack": np.from_dlpack}, repeat)
    describe("to_numpy", ours, peer, "numpy", None)


def bench_gpu(gk, np, repeat):
    cuda = [d for d in gk.devices() if d.type == "cuda"]
    if not cuda:
        print("dlpack        no CUDA GPU here: skipped (the zero-copy export is timed on a GPU)")
        return
    for device in cuda:
        x = gk.ones((1024, 1024), dtype="float32", device=device)
        ours = rounds("x.__dlpack__()", {"x": x}, repeat)
        print(f"dlpack {device}: export {statistics.median(ours) * 1e6:.2f} us "
              f"[{min(ours) * 1e6:.2f}..{max(ours) * 1e6:.2f}]  target < 10 us: "
              f"{'met' if statistics.median(ours) < 10e-6 else 'MISSED'}")
    try:
        import cupy
    except ImportError:
        print("cupy          not installed: skipped")
        return
    for n in (1000, 1 << 25):
        a = gk.ones(n, dtype="float32", device="cuda:0")
        ca = cupy.ones(n, dtype=cupy.float32)
        sync = cupy.cuda.Device(0).synchronize
        ours = rounds("a + a; s()", {"a": a, "s": gk.device("cuda:0").synchronize}, repeat)
        peer = rounds("a + a; s()", {"a": ca, "s": sync}, repeat)
        describe(f"cuda_add_{n}", ours, peer, "cupy", 1.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build-test-plain",
                        help="a build tree with tests/fake_nvml (for the gpus case)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    import numpy as np
    import gpukit as gk
    print(f"gpukit {gk.__version__} from {Path(gk.__file__).parent}; numpy {np.__version__}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    bench_arrays(gk, np, args.repeat)
    bench_gpus(args.build.resolve(), args.repeat)
    bench_import(args.repeat)
    bench_dlpack_cpu(gk, np, args.repeat)
    bench_gpu(gk, np, args.repeat)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
