"""What the benchmarks share: which build to time, importing its gpukit,
timing a call, and percentiles."""
import math
import os
import statistics
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


def compare_in_workers(parser, describe, repeat, unit="ms", pause=0.2):
    """The usual comparison of a script whose Workers serve its cases: starts
    the gpukit and NumPy sides (the script again), prints the load average,
    `describe` and a row per case (each side's median in `unit`, ms or us,
    NumPy's over gpukit's and the spread: the fastest run of one side over
    the slowest of the other), and closes them. A parser error when no case
    is left (--only naming none)."""
    ours, theirs = Worker("gpukit"), Worker("numpy")
    if not ours.names:
        ours.close()
        theirs.close()
        parser.error("--only: no such case")
    scale = 1e3 if unit == "ms" else 1e6
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(describe)
    print(f"{'case':16} {'gpukit ' + unit:>10} {'numpy ' + unit:>10} {'ratio':>7}  spread")
    for name in ours.names:
        mine, peer = times_in_workers(ours, theirs, name, repeat, pause=pause)
        ratio = statistics.median(peer) / statistics.median(mine)
        low, high = min(peer) / max(mine), max(peer) / min(mine)
        print(f"{name:16} {statistics.median(mine) * scale:10.1f} "
              f"{statistics.median(peer) * scale:10.1f} {ratio:6.2f}x  {low:.2f}-{high:.2f}x")
    ours.close()
    theirs.close()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


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
