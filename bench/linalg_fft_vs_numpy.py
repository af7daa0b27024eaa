"""Benchmark: gpukit.linalg and gpukit.fft against numpy.linalg and
numpy.fft in the same run (issue 16's CPU performance list).

The linalg cases factor one n x n float64 matrix (n = 1024 by default):
  svd        svd(a, full_matrices=False)
  qr         qr(a)
  solve      solve(a, b), b an n x n matrix
  eigh       eigh(s), s symmetric
  inv, det, cholesky (of a positive-definite matrix), eig
The stack cases (inv-stack and so on) run the same functions on a stack
of many small matrices (--stack COUNTxN, 10000x8 by default), where each
LAPACK call is tiny: NumPy loops over them on one core, gpukit shares
them out among its threads.
The fft cases transform 2^22 points (--points):
  fft, ifft  of complex128; fft64: of complex64
  rfft       of float64; irfft: back
  fft2       fftn of a 2048 x 2048 complex128 array
each through both Python APIs, a fresh result each time. The ratio is
NumPy's time / gpukit's: above 1 gpukit is faster (the target is >= 1.0x
for svd, qr, solve, eigh, fft and rfft on the CPU). Each row is the median
of --repeat runs after a warm-up run, with the spread (min to max ratio)
shown. Each side runs in a process of its own (benchlib.Worker), with its
library's own thread settings, the two sides' runs interleaved and each
after a pause in which the other's threads (OpenBLAS's spin about 0.1 s
after a call by default) go to sleep. Both sides call LAPACK through
OpenBLAS: NumPy its wheel's own, gpukit the system's (Debian's
libopenblas0 through liblapacke); NumPy's FFT is its own pocketfft,
gpukit's FFTW (threaded). It asserts nothing; it prints numbers.

    .venv/bin/python bench/linalg_fft_vs_numpy.py [--build build-rel]
        [--device cpu] [--n 1024] [--points 4194304] [--stack 10000x8]
        [--repeat 5] [--only svd,fft]
Run it with the cores quiet; the load average is printed before and after.
"""
import argparse
from pathlib import Path

import numpy as np

from benchlib import compare_in_workers, import_gpukit, serve_worker


def cases(gk, device, n, points, stack):
    """(name, gpukit run, NumPy run) for each case."""
    rng = np.random.default_rng(16)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    s = (a + a.T) / 2
    p = a @ a.T + n * np.eye(n)
    ga, gb, gs, gp = (gk.asarray(x, device=device) for x in (a, b, s, p))
    la = gk.linalg
    return [
        ("svd", lambda: la.svd(ga, full_matrices=False), lambda: np.linalg.svd(a, full_matrices=False)),
        ("qr", lambda: la.qr(ga), lambda: np.linalg.qr(a)),
        ("solve", lambda: la.solve(ga, gb), lambda: np.linalg.solve(a, b)),
        ("eigh", lambda: la.eigh(gs), lambda: np.linalg.eigh(s)),
        ("inv", lambda: la.inv(ga), lambda: np.linalg.inv(a)),
        ("det", lambda: la.det(ga), lambda: np.linalg.det(a)),
        ("cholesky", lambda: la.cholesky(gp), lambda: np.linalg.cholesky(p)),
        ("eig", lambda: la.eig(ga), lambda: np.linalg.eig(a)),
    ] + stack_cases(gk, device, stack, rng) + fft_cases(gk, device, points, rng)


def stack_cases(gk, device, stack, rng):
    count, n = (int(x) for x in stack.split("x"))
    a = rng.standard_normal((count, n, n)) + n * np.eye(n)
    p = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    b = rng.standard_normal((count, n, 1))
    ga, gp, gb = (gk.asarray(x, device=device) for x in (a, p, b))
    la = gk.linalg
    return [
        ("svd-stack", lambda: la.svd(ga), lambda: np.linalg.svd(a)),
        ("qr-stack", lambda: la.qr(ga), lambda: np.linalg.qr(a)),
        ("solve-stack", lambda: la.solve(ga, gb), lambda: np.linalg.solve(a, b)),
        ("eigh-stack", lambda: la.eigh(gp), lambda: np.linalg.eigh(p)),
        ("inv-stack", lambda: la.inv(ga), lambda: np.linalg.inv(a)),
        ("det-stack", lambda: la.det(ga), lambda: np.linalg.det(a)),
        ("cholesky-stack", lambda: la.cholesky(gp), lambda: np.linalg.cholesky(p)),
        ("eig-stack", lambda: la.eig(ga), lambda: np.linalg.eig(a)),
    ]


def fft_cases(gk, device, points, rng):
    z = rng.standard_normal(points) + 1j * rng.standard_normal(points)
    z32 = z.astype(np.complex64)
    r = rng.standard_normal(points)
    half = np.fft.rfft(r)
    plane = rng.standard_normal((2048, 2048)) + 1j * rng.standard_normal((2048, 2048))
    gz, gz32, gr, ghalf, gplane = (gk.asarray(x, device=device) for x in (z, z32, r, half, plane))
    f = gk.fft
    return [
        ("fft", lambda: f.fft(gz), lambda: np.fft.fft(z)),
        ("ifft", lambda: f.ifft(gz), lambda: np.fft.ifft(z)),
        ("fft64", lambda: f.fft(gz32), lambda: np.fft.fft(z32)),
        ("rfft", lambda: f.rfft(gr), lambda: np.fft.rfft(r)),
        ("irfft", lambda: f.irfft(ghalf), lambda: np.fft.irfft(half)),
        ("fft2", lambda: f.fftn(gplane), lambda: np.fft.fftn(plane)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("build-rel"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--points", type=int, default=1 << 22)
    parser.add_argument("--stack", default="10000x8", help="COUNTxN: the stack cases' shape")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--worker", choices=("gpukit", "numpy"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    gk = import_gpukit(args.build)
    only = set(args.only.split(",")) if args.only else None
    if args.worker:
        side = 1 if args.worker == "gpukit" else 2
        serve_worker({case[0]: case[side]
                      for case in cases(gk, args.device, args.n, args.points, args.stack)
                      if not only or case[0] in only})
        return
    compare_in_workers(parser, f"linalg: {args.n} x {args.n} float64; fft: {args.points} "
                       f"points; gpukit on {args.device} vs NumPy {np.__version__}, median of "
                       f"{args.repeat}; stacks: {args.stack}", args.repeat)

if __name__ == "__main__":
    main()
