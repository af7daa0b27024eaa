"""Benchmark: gpukit on a CUDA GPU against CuPy, Numba and the driver, in
one run (the GPU-machine figures of issues 15, 16 and 17).

Every case times both sides through their Python APIs in this process, on
the same GPU, with the device synchronized after each call; each row is the
median of --repeat runs after a warm-up, with the spread (min to max ratio).
The ratio is the peer's time / gpukit's: above 1 gpukit is faster.

  linalg   svd (full_matrices=False), qr, solve, eigh, cholesky, inv of an
           n x n float64 and float32 matrix (--n, 1024 by default) against
           cupy.linalg (target >= 1.0x for svd, qr, solve, eigh)
  stacks   inv, solve, det, slogdet, cholesky, eigh and svd of 10000 and
           of 100000 8 x 8 float64 matrices against cupy.linalg (batched
           routines)
  fft      fft of 2^22 complex128 and rfft of 2^22 float64 against cuFFT
           called directly (cupy.cuda.cufft plans made once, executed into a
           preallocated output; target within 5%, a ratio >= 0.95), and
           against cupy.fft (its plan cache)
  copy     a same-dtype contiguous copy of 2^28 float32 (asarray(copy=True))
           against the runtime's cudaMemcpy device to device (target >= 95%)
  argmax   argmax over the leading axis of a (4096, 16384) float32 array in
           TB/s read (target >= 2 TB/s) and against CuPy's
  h2d/d2h  256 MiB of pageable host memory to and from the GPU against
           cudaMemcpy from pinned memory (target >= 90%); d2h into a new
           array (its pages touched for the first time) and into an
           existing one (copy_to_host(ary))
  spin     the h2d/d2h rows again in a fresh process for each libgomp spin
           count (GOMP_SPINCOUNT 1000, gpukit's default, then 10000, 30000
           and 300000, libgomp's own): the CPU's threads copy each staging
           piece, and how long they spin decides whether they are awake
           for the next one
  half     float16 and bfloat16 add of 2^28 elements as a share of the copy
           bandwidth (target >= 85%); float16 matmul 8192^2 against CuPy's
  jit      the doubling kernel over 30M float64: @gpukit.jit against the
           same kernel in gpukit's dialect (gpukit.RawKernel; target within
           1.1x) and Numba's @cuda.jit; first launch and cached launch in a
           fresh process, beside Numba's (@cuda.jit, and cache=True for the
           cached one; target: cached <= 5 ms)

It asserts nothing; it prints numbers.

    python3 bench/cuda_vs_cupy.py [--build build-rel] [--device cuda:0]
        [--n 1024] [--repeat 7] [--only linalg,fft] [--quick]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchlib import import_gpukit

CASES = ("linalg", "stacks", "fft", "copy", "argmax", "transfer", "spin", "half", "jit")


class Bench:
    def __init__(self, gk, device, repeat):
        import cupy
        self.gk, self.cp, self.device, self.repeat = gk, cupy, device, repeat

    def sync(self):
        self.gk.synchronize(self.device)
        self.cp.cuda.Device().synchronize()

    def times(self, fn, warmup=1):
        for _ in range(warmup):
            fn()
        self.sync()
        samples = []
        for _ in range(self.repeat):
            start = time.perf_counter()
            fn()
            self.sync()
            samples.append(time.perf_counter() - start)
        return samples

    @staticmethod
    def row(name, mine, peer, peer_name, target=None, extra=""):
        m, p = statistics.median(mine), statistics.median(peer)
        ratio = p / m
        spread = f"{min(peer) / max(mine):.2f}-{max(peer) / min(mine):.2f}x"
        verdict = "" if target is None else (" met" if ratio >= target else " MISSED")
        goal = "" if target is None else f" target >= {target:.2f}{verdict}"
        print(f"  {name:24} gpukit {m * 1e3:9.3f} ms  {peer_name} {p * 1e3:9.3f} ms  "
              f"{ratio:6.2f}x ({spread}){goal}{extra}", flush=True)
        return ratio


def bench_linalg(b, n):
    gk, cp = b.gk, b.cp
    rng = np.random.default_rng(1)
    for dtype in ("float64", "float32"):
        a = rng.standard_normal((n, n)).astype(dtype)
        s = (a @ a.T + n * np.eye(n)).astype(dtype)
        rhs = rng.standard_normal((n, n)).astype(dtype)
        ga, gs, grhs = (gk.asarray(x, device=b.device) for x in (a, s, rhs))
        ca, cs, crhs = (cp.asarray(x) for x in (a, s, rhs))
        print(f"\n== linalg, {n}x{n} {dtype}, against cupy.linalg ==", flush=True)
        cases = (
            ("svd", lambda: gk.linalg.svd(ga, full_matrices=False),
             lambda: cp.linalg.svd(ca, full_matrices=False), 1.0),
            ("qr", lambda: gk.linalg.qr(ga), lambda: cp.linalg.qr(ca), 1.0),
            ("solve", lambda: gk.linalg.solve(ga, grhs), lambda: cp.linalg.solve(ca, crhs), 1.0),
            ("eigh", lambda: gk.linalg.eigh(gs), lambda: cp.linalg.eigh(cs), 1.0),
            ("cholesky", lambda: gk.linalg.cholesky(gs), lambda: cp.linalg.cholesky(cs), None),
            ("inv", lambda: gk.linalg.inv(ga), lambda: cp.linalg.inv(ca), None),
        )
        for name, mine, peer, target in cases:
            try:
                b.row(f"{name} {dtype}", b.times(mine), b.times(peer), "cupy", target)
            except Exception as error:  # one failing case must not hide the others
                print(f"  {name} {dtype}: FAILED: {type(error).__name__}: {error}", flush=True)
        check = np.abs(np.asarray(gk.linalg.svdvals(ga).copy_to_host())
                       - np.linalg.svd(a, compute_uv=False)).max()
        print(f"  svdvals largest difference from NumPy: {check:.2e}")


def bench_stacks(b, count, n):
    """Stacks of small matrices, where one call per matrix would be slow."""
    gk, cp = b.gk, b.cp
    rng = np.random.default_rng(7)
    a = rng.standard_normal((count, n, n)) + n * np.eye(n)
    s = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    rhs = rng.standard_normal((count, n, 1))
    ga, gs, grhs = (gk.asarray(x, device=b.device) for x in (a, s, rhs))
    ca, cs, crhs = (cp.asarray(x) for x in (a, s, rhs))
    print(f"\n== linalg of a stack of {count} {n}x{n} float64, against cupy.linalg ==",
          flush=True)
    cases = (
        ("inv", lambda: gk.linalg.inv(ga), lambda: cp.linalg.inv(ca)),
        ("solve", lambda: gk.linalg.solve(ga, grhs), lambda: cp.linalg.solve(ca, crhs)),
        ("det", lambda: gk.linalg.det(ga), lambda: cp.linalg.det(ca)),
        ("slogdet", lambda: gk.linalg.slogdet(ga), lambda: cp.linalg.slogdet(ca)),
        ("cholesky", lambda: gk.linalg.cholesky(gs), lambda: cp.linalg.cholesky(cs)),
        ("eigh", lambda: gk.linalg.eigh(gs), lambda: cp.linalg.eigh(cs)),
        ("svd", lambda: gk.linalg.svd(ga), lambda: cp.linalg.svd(ca)),
    )
    for name, mine, peer in cases:
        try:
            b.row(f"{name} stack", b.times(mine), b.times(peer), "cupy")
        except Exception as error:
            print(f"  {name} stack: FAILED: {type(error).__name__}: {error}", flush=True)
    check = np.abs(gk.linalg.inv(ga).copy_to_host() - np.linalg.inv(a)).max()
    print(f"  inv largest difference from NumPy: {check:.2e}")
    sign, logabs = (x.copy_to_host() for x in gk.linalg.slogdet(ga))
    want_sign, want_logabs = np.linalg.slogdet(a)
    check = max(np.abs(sign - want_sign).max(), np.abs(logabs - want_logabs).max(),
                np.abs(gk.linalg.det(ga).copy_to_host() / np.linalg.det(a) - 1).max())
    print(f"  slogdet, det largest difference from NumPy (det relative): {check:.2e}")
    u, sv, vt = (x.copy_to_host() for x in gk.linalg.svd(ga))
    check = max(np.abs(sv - np.linalg.svd(a, compute_uv=False)).max(),
                np.abs((u * sv[..., None, :]) @ vt - a).max())
    print(f"  svd largest difference from NumPy (values, reconstruction): {check:.2e}")


def bench_fft(b, points):
    gk, cp = b.gk, b.cp
    from cupy.cuda import cufft
    rng = np.random.default_rng(2)
    z = (rng.standard_normal(points) + 1j * rng.standard_normal(points)).astype(np.complex128)
    r = rng.standard_normal(points)
    gz, gr = gk.asarray(z, device=b.device), gk.asarray(r, device=b.device)
    cz, cr = cp.asarray(z), cp.asarray(r)
    print(f"\n== fft of {points} points, against cuFFT called directly and cupy.fft ==",
          flush=True)
    zout = cp.empty_like(cz)
    rout = cp.empty(points // 2 + 1, dtype=cp.complex128)
    z2z = cufft.Plan1d(points, cufft.CUFFT_Z2Z, 1)
    d2z = cufft.Plan1d(points, cufft.CUFFT_D2Z, 1)
    direct = {
        "fft": lambda: z2z.fft(cz, zout, cufft.CUFFT_FORWARD),
        "rfft": lambda: d2z.fft(cr, rout, cufft.CUFFT_FORWARD),
    }
    mine = {"fft": lambda: gk.fft.fft(gz), "rfft": lambda: gk.fft.rfft(gr)}
    library = {"fft": lambda: cp.fft.fft(cz), "rfft": lambda: cp.fft.rfft(cr)}
    for name in ("fft", "rfft"):
        try:
            ours = b.times(mine[name], warmup=2)
            b.row(f"{name} vs cuFFT direct", ours, b.times(direct[name], warmup=2), "cufft",
                  0.95)
            b.row(f"{name} vs cupy.fft", ours, b.times(library[name], warmup=2), "cupy")
        except Exception as error:
            print(f"  {name}: FAILED: {type(error).__name__}: {error}", flush=True)
    check = np.abs(gk.fft.fft(gz).copy_to_host() - np.fft.fft(z)).max() / np.abs(z).sum()
    print(f"  fft relative difference from NumPy: {check:.2e}")


def bench_copy(b, log2):
    gk, cp = b.gk, b.cp
    n = 1 << log2
    src = gk.ones((n,), dtype=gk.float32, device=b.device)
    csrc, cdst = cp.ones(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)
    nbytes = n * 4
    runtime = cp.cuda.runtime
    print(f"\n== copy of 2^{log2} float32 against cudaMemcpy device to device ==", flush=True)

    def driver():
        runtime.memcpy(cdst.data.ptr, csrc.data.ptr, nbytes, runtime.memcpyDeviceToDevice)
    mine = b.times(lambda: gk.asarray(src, copy=True))
    b.row("asarray(copy=True)", mine, b.times(driver), "memcpy", 0.95,
          f"  {2 * nbytes / statistics.median(mine) / 1e12:.2f} TB/s")
    b.row("copy vs cupy.copy", mine, b.times(lambda: csrc.copy()), "cupy")


def bench_argmax(b, rows, cols):
    gk, cp = b.gk, b.cp
    host = np.random.default_rng(3).random((rows, cols), dtype=np.float32)
    g, c = gk.asarray(host, device=b.device), cp.asarray(host)
    print(f"\n== argmax over axis 0 of ({rows}, {cols}) float32 ==", flush=True)
    for axis in (0, 1):
        mine = b.times(lambda: gk.argmax(g, axis=axis))
        rate = host.nbytes / statistics.median(mine) / 1e12
        target = f"  {rate:.2f} TB/s read" + (" (target >= 2 TB/s)" if axis == 0 else "")
        b.row(f"argmax axis={axis}", mine, b.times(lambda: cp.argmax(c, axis=axis)), "cupy",
              extra=target)
    same = np.array_equal(gk.argmax(g, axis=0).copy_to_host(), host.argmax(axis=0))
    print(f"  axis 0 equal to NumPy's: {same}")


def bench_transfer(b, mib):
    gk, cp = b.gk, b.cp
    n = mib * (1 << 20) // 4
    nbytes = n * 4
    pageable = np.random.default_rng(4).random(n, dtype=np.float32)
    pinned_memory = cp.cuda.alloc_pinned_memory(nbytes)
    pinned = np.frombuffer(pinned_memory, np.float32, n)
    pinned[...] = pageable
    dev = cp.empty(n, dtype=cp.float32)
    runtime = cp.cuda.runtime
    g = gk.asarray(pageable, device=b.device)
    print(f"\n== {mib} MiB host <-> device: pageable through gpukit, pinned through "
          f"cudaMemcpy ==", flush=True)

    def h2d_pinned():
        runtime.memcpy(dev.data.ptr, pinned.ctypes.data, nbytes, runtime.memcpyHostToDevice)

    def d2h_pinned():
        runtime.memcpy(pinned.ctypes.data, dev.data.ptr, nbytes, runtime.memcpyDeviceToHost)
    touched = np.zeros(n, dtype=np.float32)  # pageable memory already touched
    for name, mine, peer in (("h2d", lambda: gk.asarray(pageable, device=b.device), h2d_pinned),
                             ("d2h", lambda: g.copy_to_host(), d2h_pinned),
                             ("d2h(ary)", lambda: g.copy_to_host(touched), d2h_pinned)):
        ours = b.times(mine)
        b.row(f"{name} pageable vs pinned", ours, b.times(peer), "pinned", 0.90,
              f"  {nbytes / statistics.median(ours) / 1e9:.1f} GB/s")
    # The rows above reuse the CPU's kept block; the first download into
    # memory never touched pays the kernel's page faults.
    fresh = []
    for _ in range(b.repeat):
        gk.empty_cache("cpu")
        start = time.perf_counter()
        g.copy_to_host()
        fresh.append(time.perf_counter() - start)
    b.row("d2h into untouched pages", fresh, b.times(d2h_pinned), "pinned", None,
          f"  {nbytes / statistics.median(fresh) / 1e9:.1f} GB/s")
    b.row("h2d vs cupy.asarray", b.times(lambda: gk.asarray(pageable, device=b.device)),
          b.times(lambda: cp.asarray(pageable)), "cupy")
    b.row("d2h vs cupy.asnumpy", b.times(lambda: g.copy_to_host()),
          b.times(lambda: cp.asnumpy(dev)), "cupy")


def bench_spin(build, device, repeat, quick):
    """The transfer case in a fresh process per spin count: libgomp reads
    GOMP_SPINCOUNT once, when it loads."""
    for spin in ("1000", "10000", "30000", "300000"):
        print(f"\n== transfers with GOMP_SPINCOUNT={spin} ==", flush=True)
        command = [sys.executable, __file__, "--build", str(build), "--device", device,
                   "--repeat", str(repeat), "--only", "transfer"] + (["--quick"] if quick else [])
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        run = subprocess.run(command, env={**env, "GOMP_SPINCOUNT": spin}, text=True,
                             capture_output=True)
        print("".join(line + "\n" for line in run.stdout.splitlines()
                      if "pageable vs pinned" in line or "untouched" in line
                      or "FAILED" in line), end="",
              flush=True)
        if run.returncode:
            print(f"  FAILED ({run.returncode}): {run.stderr[-400:]}", flush=True)


def bench_half(b, log2, order):
    gk, cp = b.gk, b.cp
    n = 1 << log2
    runtime = cp.cuda.runtime
    csrc, cdst = cp.ones(n, dtype=cp.float32), cp.empty(n, dtype=cp.float32)

    def driver():
        runtime.memcpy(cdst.data.ptr, csrc.data.ptr, n * 4, runtime.memcpyDeviceToDevice)
    copy_rate = 2 * n * 4 / statistics.median(b.times(driver))
    print(f"\n== float16/bfloat16, 2^{log2} elements; copy reference "
          f"{copy_rate / 1e12:.2f} TB/s ==", flush=True)
    for dtype in ("float16", "bfloat16"):
        x = gk.ones((n,), dtype=getattr(gk, dtype), device=b.device)
        y = gk.ones((n,), dtype=getattr(gk, dtype), device=b.device)
        mine = b.times(lambda: gk.add(x, y))
        share = 3 * n * 2 / statistics.median(mine) / copy_rate
        verdict = "met" if share >= 0.85 else "MISSED"
        print(f"  add {dtype:9} {statistics.median(mine) * 1e3:8.3f} ms  {share * 100:5.1f}% "
              f"of copy  target >= 85%: {verdict}", flush=True)
        if dtype == "float16":
            cx, cy = cp.ones(n, dtype=cp.float16), cp.ones(n, dtype=cp.float16)
            b.row("add float16 vs cupy", mine, b.times(lambda: cx + cy), "cupy")
        del x, y
    for dtype in ("float16", "bfloat16"):
        try:
            host = np.random.default_rng(5).random((order, order), dtype=np.float32)
            ga = gk.astype(gk.asarray(host, device=b.device), getattr(gk, dtype))
            mine = b.times(lambda: gk.matmul(ga, ga))
            flops = 2 * order ** 3 / statistics.median(mine) / 1e12
            if dtype == "float16":
                ca = cp.asarray(host).astype(cp.float16)
                b.row(f"matmul {dtype} {order}^2", mine, b.times(lambda: ca @ ca), "cupy",
                      extra=f"  {flops:.0f} TFLOP/s")
            else:
                print(f"  matmul {dtype} {order}^2 {statistics.median(mine) * 1e3:9.3f} ms  "
                      f"{flops:.0f} TFLOP/s (CuPy has no bfloat16)", flush=True)
        except Exception as error:
            print(f"  matmul {dtype}: FAILED: {type(error).__name__}: {error}", flush=True)


JIT_KERNELS = '''
import gpukit


@gpukit.jit
def double(x):
    i = gpukit.grid(1)
    if i < x.size:
        x[i] = x[i] * 2
'''

NUMBA_KERNELS = '''
from numba import cuda


@cuda.jit
def double(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 2


@cuda.jit(cache=True)
def double_cached(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 2
'''

DIALECT = """
GK_KERNEL void double_it(GK_GLOBAL double *x, gk_i64 n)
{
    gk_i64 i = GK_GLOBAL_ID(0);
    if (i < n)
        x[i] = x[i] * 2;
}
"""

# Import, make the array, start the device (a CUDA context) untimed; then
# time the first launch of the kernel in this fresh process.
FRESH_GPUKIT = '''
import sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import gpukit, jit_kernels as k
x = gpukit.zeros((1024,), dtype=gpukit.float64, device=sys.argv[3])
gpukit.synchronize(sys.argv[3])
start = time.perf_counter()
k.double[4, 256](x)
gpukit.synchronize(sys.argv[3])
print(time.perf_counter() - start)
'''

FRESH_NUMBA = '''
import sys, time
sys.path[:0] = [sys.argv[2]]
from numba import cuda
import numba_kernels as k
x = cuda.device_array(1024)
cuda.synchronize()
start = time.perf_counter()
getattr(k, sys.argv[3])[4, 256](x)
cuda.synchronize()
print(time.perf_counter() - start)
'''


def fresh(script, build, kernels, what, env):
    """Seconds of the first launch in a fresh process running `script`
    (`what`: gpukit's device, or the Numba kernel's name)."""
    out = subprocess.run([sys.executable, "-c", script, str(build / "python"), str(kernels),
                          what], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
    return float(out.stdout.strip())


def bench_jit(b, build, n):
    gk = b.gk
    print(f"\n== @gpukit.jit doubling kernel over {n} float64 ==", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        kernels = Path(scratch)
        (kernels / "jit_kernels.py").write_text(JIT_KERNELS)
        (kernels / "numba_kernels.py").write_text(NUMBA_KERNELS)
        sys.path.insert(0, str(kernels))
        import jit_kernels
        x = gk.asarray(np.random.default_rng(6).random(n), device=b.device)
        blocks = (n + 255) // 256
        raw = gk.RawKernel(DIALECT, "double_it", device=b.device)
        mine = b.times(lambda: jit_kernels.double[blocks, 256](x))
        b.row("jit vs dialect kernel", mine, b.times(lambda: raw((blocks,), (256,), (x, n))),
              "dialect", 1 / 1.1)
        try:
            from numba import cuda
            import numba_kernels
            nx = cuda.to_device(np.random.default_rng(6).random(n))

            def numba_run():
                numba_kernels.double[blocks, 256](nx)
                cuda.synchronize()
            b.row("jit vs numba.cuda.jit", mine, b.times(numba_run), "numba")
        except Exception as error:
            print(f"  numba: FAILED: {type(error).__name__}: {error}", flush=True)
        env = dict(os.environ)
        firsts, cached = [], []
        for _ in range(3):
            with tempfile.TemporaryDirectory() as empty:
                env["GPUKIT_CACHE_DIR"] = empty
                firsts.append(fresh(FRESH_GPUKIT, build, kernels, b.device, env))
        env["GPUKIT_CACHE_DIR"] = str(kernels / "cache")
        fresh(FRESH_GPUKIT, build, kernels, b.device, env)
        for _ in range(b.repeat):
            cached.append(fresh(FRESH_GPUKIT, build, kernels, b.device, env))
        nb_first, nb_cached = [], []
        try:
            numba_env = dict(os.environ)
            for _ in range(3):
                with tempfile.TemporaryDirectory() as empty:
                    numba_env["NUMBA_CACHE_DIR"] = empty
                    nb_first.append(fresh(FRESH_NUMBA, build, kernels, "double", numba_env))
            numba_env["NUMBA_CACHE_DIR"] = str(kernels / "numba-cache")
            fresh(FRESH_NUMBA, build, kernels, "double_cached", numba_env)  # fills it
            for _ in range(b.repeat):
                nb_cached.append(fresh(FRESH_NUMBA, build, kernels, "double_cached", numba_env))
        except Exception as error:
            print(f"  numba fresh process: FAILED: {error}", flush=True)
        med = statistics.median
        print(f"  first launch, fresh process, empty cache: gpukit {med(firsts) * 1e3:8.1f} ms"
              + (f", numba {med(nb_first) * 1e3:8.1f} ms (ratio {med(nb_first) / med(firsts):.2f}x)"
                 if nb_first else ""), flush=True)
        print(f"  cached launch, fresh process: gpukit {med(cached) * 1e3:8.2f} ms "
              f"({min(cached) * 1e3:.2f}-{max(cached) * 1e3:.2f}); target <= 5 ms: "
              f"{'met' if med(cached) <= 0.005 else 'MISSED'}"
              + (f"; numba @cuda.jit(cache=True) {med(nb_cached) * 1e3:8.2f} ms "
                 f"(ratio {med(nb_cached) / med(cached):.2f}x)" if nb_cached else ""), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("build-rel"))
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: a dry run of the script, not a measurement")
    args = parser.parse_args()
    args.build = args.build.resolve()
    gk = import_gpukit(args.build)
    b = Bench(gk, args.device, args.repeat)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"gpukit on {args.device} ({gk.device(args.device)}); CuPy {b.cp.__version__}; "
          f"median of {args.repeat}", flush=True)
    shift = 8 if args.quick else 0
    runs = {
        "linalg": lambda: bench_linalg(b, args.n >> shift // 2),
        "stacks": lambda: [bench_stacks(b, count >> shift, 8) for count in (10000, 100000)],
        "fft": lambda: bench_fft(b, 1 << (22 - shift)),
        "copy": lambda: bench_copy(b, 28 - shift),
        "argmax": lambda: bench_argmax(b, 4096 >> shift // 2, 16384 >> shift // 2),
        "transfer": lambda: bench_transfer(b, 256 >> shift),
        "spin": lambda: bench_spin(args.build, args.device, args.repeat, args.quick),
        "half": lambda: bench_half(b, 28 - shift, 8192 >> shift // 2),
        "jit": lambda: bench_jit(b, args.build, 30_000_000 >> shift),
    }
    for name in args.only.split(","):
        try:
            runs[name]()
        except Exception as error:
            print(f"\n{name}: FAILED: {type(error).__name__}: {error}", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
