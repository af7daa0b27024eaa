"""What the benchmarks share: which build to time, importing its gpukit,
timing a call, and percentiles."""
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_build(command):
    """./build-rel (optimized) when its gpukit knows `command`, else ./build."""
    for name in ("build-rel", "build"):
        gpukit = ROOT / name / "gpukit"
        if gpukit.exists() and subprocess.run([str(gpukit), command, "--help"],
                                              capture_output=True).returncode == 0:
            return ROOT / name
    return ROOT / "build"


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def import_gpukit(build):
    """The gpukit package of the build directory `build` (a Path), else the
    installed one."""
    if (build / "python" / "gpukit").is_dir():
        sys.path.insert(0, str(build / "python"))
    import gpukit
    return gpukit


def times_interleaved(first, second, repeat, warmup=1):
    """Seconds each of `repeat` calls of first() and of second() takes,
    run by run, alternating which goes first: each side then follows the
    other as often, so neither pays alone for what the other leaves behind
    (OpenBLAS's threads spin for a while after a call, on both sides)."""
    for _ in range(warmup):
        first()
        second()
    samples = ([], [])
    runs = (first, second)
    for r in range(repeat):
        for side in ((0, 1) if r % 2 == 0 else (1, 0)):
            start = time.perf_counter()
            runs[side]()
            samples[side].append(time.perf_counter() - start)
    return samples


def times(run, repeat, warmup=2):
    """Seconds each of `repeat` calls of run() takes, after `warmup` calls."""
    for _ in range(warmup):
        run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return samples
