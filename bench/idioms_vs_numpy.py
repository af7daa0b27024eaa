"""Benchmark: everyday notebook idioms on mid-size arrays, gpukit against
NumPy in the same run.

Where bench/array_vs_numpy.py times 2^24 elements from C, this times what a
notebook does from Python on arrays that fit in cache (65536 elements by
default, --size): arithmetic, comparisons, conversions, reductions along
either axis of a (size / 256) x 256 matrix, argmax of rows, sorting, set
functions, creation, dot products and Gram matrices. There the cost per call
(argument parsing, allocation, threads waking) and the vector width of the
loops matter as much as memory bandwidth.

Each side runs in a process of its own (benchlib.Worker), started with a
pause so that NumPy's OpenBLAS threads, which spin for a while after
start-up, are asleep. A sample is the mean of as many back-to-back calls
as take about 2 ms (at least 5), after warm-up calls; each row is the median of --repeat samples per side, the two sides
interleaved, and the spread is the ratio of the fastest sample of one side
to the slowest of the other. The ratio is NumPy's time / gpukit's: above 1
gpukit is faster. It asserts nothing; it prints numbers.

    .venv/bin/python bench/idioms_vs_numpy.py [--build build-rel]
        [--size 65536] [--dtype float32] [--repeat 7] [--only sum,sort]
Run it with the cores quiet; the load average is printed before and after.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from benchlib import compare_in_workers, import_gpukit

SAMPLE_SECONDS = 0.002


def cases(m, size, dtype):
    """(name, call) for each case, on the module m (gpukit or numpy)."""
    rng = np.random.default_rng(17)
    a, b = (m.asarray(rng.random(size).astype(dtype)) for _ in range(2))
    matrix = m.asarray(rng.random((size // 256, 256)).astype(dtype))
    mask = a > 0.5
    labels = m.asarray((rng.random(size) * min(size, 1000)).astype(np.int64))
    vecdot = m.vecdot if m is not np else np.dot
    return [
        ("add", lambda: a + b),
        ("mul_scalar", lambda: a * 2.5),
        ("greater", lambda: a > b),
        ("maximum", lambda: m.maximum(a, b)),
        ("where", lambda: m.where(mask, a, b)),
        ("clip", lambda: m.clip(a, 0.2, 0.8)),
        ("floor", lambda: m.floor(a)),
        ("exp", lambda: m.exp(a)),
        ("tanh", lambda: m.tanh(a)),
        ("pow_2.5", lambda: a ** 2.5),
        ("astype_int32", lambda: a.astype(m.int32)),
        ("astype_int64", lambda: a.astype(m.int64)),
        ("copy", lambda: m.asarray(a, copy=True)),
        ("sum", lambda: m.sum(a)),
        ("mean", lambda: m.mean(a)),
        ("std", lambda: m.std(a)),
        ("max", lambda: m.max(a)),
        ("argmax", lambda: m.argmax(a)),
        ("count_nonzero", lambda: m.count_nonzero(mask)),
        ("all", lambda: m.all(mask)),
        ("sum_axis0", lambda: m.sum(matrix, axis=0)),
        ("sum_axis1", lambda: m.sum(matrix, axis=1)),
        ("argmax_axis1", lambda: m.argmax(matrix, axis=1)),
        ("center_columns", lambda: matrix - m.mean(matrix, axis=0)),
        ("sort", lambda: m.sort(a)),
        ("argsort", lambda: m.argsort(a)),
        ("sort_axis1", lambda: m.sort(matrix, axis=1)),
        ("unique_labels", lambda: m.unique_values(labels)),
        ("nonzero", lambda: m.nonzero(mask)),
        ("take", lambda: m.take(a, labels)),
        ("arange", lambda: m.arange(size)),
        ("linspace", lambda: m.linspace(0, 1, size)),
        ("zeros", lambda: m.zeros(size)),
        ("full", lambda: m.full(size, 3.0)),
        ("vecdot", lambda: vecdot(a, b)),
        ("gram", lambda: matrix.T @ matrix),
        ("diff", lambda: m.diff(a)),
    ]


def serve(runs):
    """A Worker's side: the case names, then for each name read from
    standard input the mean seconds of one call over about 2 ms of calls."""
    print(",".join(name for name, _ in runs), flush=True)
    calls, table = {}, dict(runs)
    for line in sys.stdin:
        name = line.strip()
        run = table[name]
        if name not in calls:  # warm up (libraries load), then size the samples
            for _ in range(3):
                run()
            start = time.perf_counter()
            for _ in range(5):
                run()
            one = max((time.perf_counter() - start) / 5, 1e-7)
            calls[name] = max(5, int(SAMPLE_SECONDS / one))
        start = time.perf_counter()
        for _ in range(calls[name]):
            run()
        print((time.perf_counter() - start) / calls[name], flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("build-rel"))
    parser.add_argument("--size", type=int, default=65536)
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--worker", choices=("gpukit", "numpy"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.size < 256 or args.size % 256:
        parser.error(f"--size {args.size}: it must be a multiple of 256 (the matrix's rows)")
    only = set(args.only.split(",")) if args.only else None
    if args.worker:
        module = import_gpukit(args.build) if args.worker == "gpukit" else np
        runs = [(name, run) for name, run in cases(module, args.size, args.dtype)
                if not only or name in only]
        time.sleep(0.5)  # NumPy's OpenBLAS threads spin after start-up
        serve(runs)
        return
    compare_in_workers(parser, f"{args.size} {args.dtype} elements (matrix cases: "
                       f"{args.size // 256} x 256); gpukit on the CPU vs NumPy {np.__version__}, "
                       f"median of {args.repeat} samples", args.repeat, unit="us", pause=0.01)

if __name__ == "__main__":
    main()
