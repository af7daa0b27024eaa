"""Benchmark: gpukit's indexing, joining, searching and set functions
against NumPy in the same run (issue 15's performance list).

On 2^24 elements (float32 and int64 where it matters), each side timed
through its Python API, a fresh result each time:
  mask        x[mask], a random mask with half the elements true
  take        take(x, i) with 2^24 random int64 indices
  concat      concat of four 2^22-element pieces
  unique      unique_values of 2^24 int32 drawn from 2^16 values (NumPy's
              np.unique; NumPy 2.4's unique_values may hash, and need not
              sort, so np.unique is the like-for-like result)
  searchsorted  2^24 sorted float64 searched for 2^20 random values (random
              lookups into 128 MiB: both sides take seconds for 2^24)
  setitem     x[mask] = 0.0
The ratio is NumPy's time / gpukit's: above 1 gpukit is faster (the target
is >= 1.0x on the CPU). Each row is the median of --repeat runs after two
warm-up runs, with the spread (min to max ratio) shown; the results are
also checked equal to NumPy's. It asserts nothing; it prints numbers.

    .venv/bin/python bench/indexing_vs_numpy.py [--build build-rel]
                                                [--device cpu] [--repeat 7]
Run it with the cores quiet; the load average is printed before and after.
"""
import argparse
import os
import statistics
from pathlib import Path

import numpy as np

from benchlib import import_gpukit, times

N = 1 << 24


def cases(gk, device):
    """(name, gpukit run, NumPy run, check) for each case."""
    rng = np.random.default_rng(15)
    x = rng.standard_normal(N).astype(np.float32)
    mask = rng.integers(0, 2, N).astype(bool)
    indices = rng.integers(0, N, N)
    pieces = [x[k * (N // 4):(k + 1) * (N // 4)] for k in range(4)]
    ints = rng.integers(0, 1 << 16, N).astype(np.int32)
    table = np.sort(rng.standard_normal(N))
    values = rng.standard_normal(N >> 4)
    gx, gmask, gindices = (gk.asarray(a, device=device) for a in (x, mask, indices))
    gpieces = [gk.asarray(p, device=device) for p in pieces]
    gints, gtable, gvalues = (gk.asarray(a, device=device) for a in (ints, table, values))
    target, gtarget = x.copy(), gk.asarray(x.copy(), device=device)

    def set_numpy():
        target[mask] = 0.0

    def set_gpukit():
        gtarget[gmask] = 0.0

    return [
        ("mask", lambda: gx[gmask], lambda: x[mask], lambda: (gx[gmask], x[mask])),
        ("take", lambda: gk.take(gx, gindices), lambda: np.take(x, indices),
         lambda: (gk.take(gx, gindices), np.take(x, indices))),
        ("concat", lambda: gk.concat(gpieces), lambda: np.concat(pieces),
         lambda: (gk.concat(gpieces), np.concat(pieces))),
        ("unique", lambda: gk.unique_values(gints), lambda: np.unique(ints),
         lambda: (gk.unique_values(gints), np.unique(ints))),
        ("searchsorted", lambda: gk.searchsorted(gtable, gvalues),
         lambda: np.searchsorted(table, values),
         lambda: (gk.searchsorted(gtable, gvalues), np.searchsorted(table, values))),
        ("setitem", set_gpukit, set_numpy, None),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path(__file__).resolve().parent.parent
                        / "build-rel", help="the build whose python/ package to use")
    parser.add_argument("--device", default="cpu", help="gpukit's device (default: cpu)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per case")
    args = parser.parse_args()
    gk = import_gpukit(args.build.resolve())
    print(f"NumPy {np.__version__}, {os.cpu_count()} CPUs; gpukit on {args.device}")
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print(f"{'case':<13} {'gpukit s':>10} {'NumPy s':>10} {'ratio':>7} {'spread':>13} check")
    below = 0
    for name, ours, theirs, check in cases(gk, args.device):
        mine, numpy_times = times(ours, args.repeat), times(theirs, args.repeat)
        ratio = statistics.median(numpy_times) / statistics.median(mine)
        low, high = min(numpy_times) / max(mine), max(numpy_times) / min(mine)
        verdict = "-"
        if check:
            got, want = check()
            verdict = "equal" if np.array_equal(np.asarray(got.tolist()), want) else "DIFFERS"
        below += ratio < 1.0
        print(f"{name:<13} {statistics.median(mine):10.4f} {statistics.median(numpy_times):10.4f} "
              f"{ratio:6.2f}x {low:5.2f}-{high:5.2f}x {verdict}")
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    print(f"rows below 1.0x: {below}")


if __name__ == "__main__":
    main()
