"""Benchmark: @gpukit.jit kernels against NumPy in the same run (issue 17's
performance list), on one device (cpu by default).

  double     the tutorial's doubling kernel over --n float64 values (in
             place) against NumPy's `a * 2` (a new array, the issue's peer)
             and `np.multiply(a, 2, out=a)` (in place, the like-for-like)
  fizzbuzz   FizzBuzz codes of 1..--n into uint8 against NumPy's
             vectorised expression
  launch     one cached launch of a kernel on a 1-element array, in this
             process (no peer: the fixed cost of a launch)
  first      the first launch in a fresh process with an empty kernel
             cache (translate + compile + run)
  cached     the first launch in a fresh process whose disk cache holds the
             translation and the binary (read both, load, run; the target
             is <= 5 ms)
  (both after the device's runtime is started: a CUDA context, or for the
  cpu the OpenCL driver, a fixed cost of any first kernel)

The ratio is NumPy's time / gpukit's: above 1 gpukit is faster (the target
for double is within 1.5x of `a * 2`, a ratio >= 0.67). Each row is the
median of --repeat runs after a warm-up run, with the spread (min to max
ratio). GPU devices are synchronized after each launch. It asserts
nothing; it prints numbers.

    .venv/bin/python bench/jit_vs_numpy.py [--build build-rel] [--device cpu]
        [--n 30000000] [--repeat 7]
Run it with the cores quiet; the load average is printed before and after.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchlib import import_gpukit, times

KERNELS = '''
import gpukit


@gpukit.jit
def double(x):
    i = gpukit.grid(1)
    if i < x.size:
        x[i] = x[i] * 2


@gpukit.jit
def fizzbuzz(out):
    i = gpukit.grid(1)
    if i < out.size:
        n = i + 1
        if n % 15 == 0:
            out[i] = 3
        elif n % 5 == 0:
            out[i] = 2
        elif n % 3 == 0:
            out[i] = 1
        else:
            out[i] = 0
'''

# A fresh process: import, make the array, start the device's kernel
# runtime (a CUDA context; for the cpu, the OpenCL driver), then time only
# the first launch of the jit kernel.
FRESH = '''
import sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import gpukit, bench_kernels as k
x = gpukit.zeros((1024,), dtype=gpukit.float64, device=sys.argv[3])
gpukit.RawKernel("GK_KERNEL void warm(GK_GLOBAL float *x) {}", "warm", device=sys.argv[3])
start = time.perf_counter()
k.double[4, 256](x)
gpukit.device(sys.argv[3]).synchronize()
print(time.perf_counter() - start)
'''


def report(name, mine, peer, unit=1e3, label="ms"):
    if peer is None:
        print(f"{name:10} {statistics.median(mine) * unit:10.3f} {'':>10} {'':>7}  ({label})")
        return
    ratio = statistics.median(peer) / statistics.median(mine)
    low, high = min(peer) / max(mine), max(peer) / min(mine)
    print(f"{name:10} {statistics.median(mine) * unit:10.3f} {statistics.median(peer) * unit:10.3f} "
          f"{ratio:6.2f}x  {low:.2f}-{high:.2f}x  ({label})")


def fresh_launch(build, kernels_dir, device, cache, repeat):
    """Seconds of the first launch in each of `repeat` fresh processes."""
    env = dict(os.environ, GPUKIT_CACHE_DIR=str(cache))
    samples = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", FRESH, str(build / "python"), str(kernels_dir),
                              device], env=env, capture_output=True, text=True, check=True)
        samples.append(float(out.stdout.strip()))
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("build-rel"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=30_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    gk = import_gpukit(args.build)
    device = gk.device(args.device)
    with tempfile.TemporaryDirectory() as scratch:
        kernels_dir = Path(scratch)
        (kernels_dir / "bench_kernels.py").write_text(KERNELS)
        sys.path.insert(0, str(kernels_dir))
        import bench_kernels as k

        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"@gpukit.jit on {args.device} vs NumPy {np.__version__}: n = {args.n}, "
              f"median of {args.repeat}")
        print(f"{'case':10} {'gpukit':>10} {'numpy':>10} {'ratio':>7}  spread")
        n = args.n
        values = np.random.default_rng(17).random(n)
        x = gk.asarray(values.copy(), device=args.device)
        blocks = (n + 255) // 256

        def run_double():
            k.double[blocks, 256](x)
            device.synchronize()
        mine = times(run_double, args.repeat, warmup=1)
        report("double", mine, times(lambda: values * 2, args.repeat, warmup=1),
               label="vs a * 2")
        report("double", mine, times(lambda: np.multiply(values, 2, out=values), args.repeat,
                                     warmup=1), label="vs in place")

        codes = gk.zeros((n,), dtype=gk.uint8, device=args.device)
        numbers = np.arange(1, n + 1)

        def numpy_fizzbuzz():
            return ((numbers % 3 == 0) + 2 * (numbers % 5 == 0)).astype(np.uint8)

        def run_fizzbuzz():
            k.fizzbuzz[blocks, 256](codes)
            device.synchronize()
        report("fizzbuzz", times(run_fizzbuzz, args.repeat, warmup=1),
               times(numpy_fizzbuzz, args.repeat, warmup=1))

        one = gk.zeros((1,), dtype=gk.float64, device=args.device)

        def tiny():
            k.double[1, 32](one)
            device.synchronize()
        report("launch", times(tiny, args.repeat * 100, warmup=10), None, unit=1e6,
               label="us, cached, in process")

        cache = kernels_dir / "cache"
        first = []
        for _ in range(min(args.repeat, 3)):
            for entry in cache.glob("*"):
                entry.unlink()
            first += fresh_launch(args.build, kernels_dir, args.device, cache, 1)
        report("first", first, None, label="ms, fresh process, empty cache")
        report("cached", fresh_launch(args.build, kernels_dir, args.device, cache, args.repeat),
               None, label="ms, fresh process, disk cache")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
