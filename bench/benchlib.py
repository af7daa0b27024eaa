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


class Worker:
    """One side of a comparison in a process of its own: the calling script
    again (its arguments plus --worker SIDE), which serves timings through
    serve_worker. Two libraries in one process share it with each other's
    threads (OpenBLAS's, NumPy's and gpukit's): on two cores gpukit's
    1024 x 1024 eigh took 105-137 ms there, 96 ms alone, and NumPy's
    108-128 ms, 111 ms alone."""

    def __init__(self, side):
        self.side = side
        self.process = subprocess.Popen([sys.executable] + sys.argv + ["--worker", side],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)
        self.names = [name for name in self._line().split(",") if name]

    def _line(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.side} worker ended ({self.process.wait()})")
        return line.strip()

    def time(self, name):
        """Seconds one call of case `name` takes in the worker."""
        self.process.stdin.write(name + "\n")
        return float(self._line())

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def serve_worker(runs):
    """A Worker's side: prints the case names of `runs` (a dict of name ->
    run), then for each name read from standard input the seconds one call
    of that run takes."""
    print(",".join(runs), flush=True)
    for line in sys.stdin:
        run = runs[line.strip()]
        start = time.perf_counter()
        run()
        print(time.perf_counter() - start, flush=True)


def times_in_workers(first, second, name, repeat, warmup=1, pause=0.2):
    """Seconds each of `repeat` calls of case `name` takes in the Workers
    `first` and `second`, run by run, alternating which goes first (the
    machine's own noise then falls on both alike). Each call waits `pause`
    seconds first, for the other side's threads to go to sleep: OpenBLAS's
    spin for 2^28 cycles after a call unless told otherwise, and would take
    the cores from the next call in the other process."""
    for _ in range(warmup):
        first.time(name)
        second.time(name)
    samples = ([], [])
    workers = (first, second)
    for r in range(repeat):
        for side in ((0, 1) if r % 2 == 0 else (1, 0)):
            time.sleep(pause)
            samples[side].append(workers[side].time(name))
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
