"""Benchmark: gpukit arrays against NumPy in the same run, on this machine.

The C side (bench/array_bench.c) and NumPy each time the issue's operations:
  add       c = a + b of two float32 arrays of 2^25 elements, a new result
            each time (NumPy: np.add(a, b)); target >= 1.5x NumPy
  add_into  the same into a preallocated c (NumPy: np.add(a, b, out=c))
  sum       the sum of 2^26 float32 (NumPy: np.sum(a, dtype=np.float32));
            target >= 1.5x NumPy
  matmul    float32 2048x2048 @ 2048x2048 (NumPy: a @ b); target >= 0.9x
  copy      2^26 float32 copied: STREAM-style in C (memcpy, one chunk per
            CPU), np.copyto in NumPy: the memory bandwidth the others are
            measured against
Each side warms up, then takes the median of --repeat runs (matmul: fewer).
The ratio is NumPy's time / gpukit's: above 1 gpukit is faster. Rates are
bytes moved / time (reads + writes, no write-allocate traffic) or
2 n^3 / time. It builds nothing and asserts nothing: it prints numbers.

--table adds the regression table, timed through the Python package of the
same build (BUILD/python) in this process, one side after the other:
  every elementwise math function on 2^24 float32 and float64 elements into
  a fresh result (NumPy: np.exp(a), ...), inputs drawn inside the
  function's domain; and every reduction (sum, mean, prod, min, max, argmin,
  argmax, var, std) of a 4096x4096 and a 256x256x256 float32 and float64
  array, without an axis and over each axis. The target for every row is
  >= 1.0x (issues 14 and 15). Its check column is gpukit's largest difference
  from NumPy: in units in the last place (ULP) of NumPy's result for the
  float functions, as a relative error for the reductions, exact for argmin/
  argmax and every bool or integer result.
  --only NAME[,NAME] keeps the rows whose function is named.
  --dtypes float16,float32 picks the float dtypes of the table (default:
  float32,float64); float16 rows time gpukit's float32-computed kernels
  against NumPy's float16 loops (NumPy has no bfloat16).

    .venv/bin/python bench/array_vs_numpy.py [--build DIR] [--repeat 20]
                                             [--matmul-repeat 5] [--device cpu]
                                             [--cases add,add_into,sum,matmul,copy]
                                             [--table] [--table-repeat 7] [--only exp,sum]
                                             [--dtypes float16,float32,float64]
Run it with the cores quiet (taskset -c 0,1 on an otherwise idle machine);
the load average before and after is printed with the results.
"""
import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchlib import import_gpukit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = ("copy", "add", "add_into", "sum", "matmul")
TARGETS = {"add": 1.5, "sum": 1.5, "matmul": 0.9}  # from the issue: ratio >= target
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOMP_CPU_AFFINITY",
                    "OMP_PROC_BIND")


def default_build():
    """./build-rel (optimized) when it has the benchmark, else ./build."""
    for name in ("build-rel", "build"):
        if (ROOT / name / "bench" / "array_bench").exists():
            return ROOT / name
    return ROOT / "build"


def pattern(n, scale):
    """What array_bench fills its inputs with: (i % 1000) * scale, float32."""
    return ((np.arange(n, dtype=np.int64) % 1000).astype(np.float32) * np.float32(scale))


def time_numpy(run, repeat, warmup=2):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()  # CLOCK_MONOTONIC on Linux, as in array_bench
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def numpy_case(case, repeat):
    """(median s, min s, bytes, flops, check) of one case in NumPy."""
    if case in ("add", "add_into"):
        n = 1 << 25
        a, b = pattern(n, 0.001), pattern(n, 0.002)
        if case == "add":
            run = lambda: np.add(a, b)  # noqa: E731 - a new array each time, like a + b
        else:
            c = np.empty_like(a)
            run = lambda: np.add(a, b, out=c)  # noqa: E731
        median, best = time_numpy(run, repeat)
        return median, best, 3 * 4 * n, 0, "ok" if np.array_equal(run(), a + b) else "wrong"
    if case == "sum":
        n = 1 << 26
        a = pattern(n, 0.001)
        result = []
        median, best = time_numpy(lambda: result.append(np.sum(a, dtype=np.float32)), repeat)
        expected = a.sum(dtype=np.float64)
        ok = abs(float(result[-1]) - expected) <= 1e-4 * abs(expected)
        return median, best, 4 * n, 0, "ok" if ok else f"sum is {result[-1]}, expected {expected}"
    if case == "matmul":
        side = 2048
        a = pattern(side * side, 0.001).reshape(side, side)
        b = pattern(side * side, 0.002).reshape(side, side)
        median, best = time_numpy(lambda: a @ b, repeat)
        return median, best, 0, 2 * side ** 3, "ok"
    if case == "copy":
        n = 1 << 26
        src, dst = pattern(n, 1.0), np.zeros(n, dtype=np.float32)
        median, best = time_numpy(lambda: np.copyto(dst, src), repeat)
        return median, best, 2 * 4 * n, 0, "ok" if np.array_equal(dst, src) else "wrong"
    raise ValueError(case)


def gpukit_case(bench, case, repeat, device):
    command = [str(bench), case, str(repeat)] + ([device] if device else [])
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return {"error": (result.stderr.strip() or f"exit {result.returncode}").splitlines()[-1]}
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {"error": f"unreadable output: {result.stdout.strip()[:200]!r}"}


def numpy_blas():
    """(description, threads) of the BLAS NumPy uses."""
    try:
        from threadpoolctl import threadpool_info
        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            info = infos[0]
            return (f"{info.get('internal_api')} {info.get('version')} ({info.get('filepath')})",
                    info.get("num_threads"))
    except ImportError:
        pass
    description = "?"
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        description = config.get("openblas configuration") or f"{config.get('name')} {config.get('version')}"
    except Exception:  # older NumPy: no mode argument
        pass
    return description, openblas_threads_loaded()


def openblas_threads_loaded():
    """The thread count of the OpenBLAS loaded in this process (NumPy's), asked
    directly as threadpoolctl would; None when none is found."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("openblas_get_num_threads", "openblas_get_num_threads64_",
                       "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads"):
            function = getattr(library, symbol, None)
            if function is not None:
                function.restype = ctypes.c_int
                return function()
    return None


def rate(bytes_, flops, seconds):
    if not seconds:
        return "-"
    return f"{flops / seconds / 1e9:.1f} GFLOP/s" if flops else f"{bytes_ / seconds / 1e9:.1f} GB/s"


def share(ours, copy_row):
    """gpukit's GB/s as a share of the measured copy bandwidth."""
    if not copy_row or not ours.get("bytes") or ours["case"] == "copy":
        return "-"
    return f"{ours['gb_per_s'] / copy_row['gb_per_s']:.0%}"


# --- the regression table: every elementwise function and reduction ---------

TABLE_N = 1 << 24
# (gpukit name, NumPy function, low, high) of each unary function: inputs are
# uniform in [low, high), inside the domain, where NumPy's fast paths run.
UNARY = (
    ("exp", np.exp, -80.0, 80.0), ("log", np.log, 1e-3, 1e3),
    ("sqrt", np.sqrt, 0.0, 1e3), ("sin", np.sin, -100.0, 100.0),
    ("cos", np.cos, -100.0, 100.0), ("tan", np.tan, -1.5, 1.5),
    ("tanh", np.tanh, -10.0, 10.0), ("asin", np.arcsin, -1.0, 1.0),
    ("acos", np.arccos, -1.0, 1.0), ("atan", np.arctan, -100.0, 100.0),
    ("sinh", np.sinh, -80.0, 80.0), ("cosh", np.cosh, -80.0, 80.0),
    ("asinh", np.arcsinh, -1e3, 1e3), ("acosh", np.arccosh, 1.0, 1e3),
    ("atanh", np.arctanh, -0.999, 0.999), ("log1p", np.log1p, -0.999, 1e3),
    ("expm1", np.expm1, -80.0, 80.0),
    # NumPy has no sigmoid: the expression a NumPy user writes stands in.
    ("sigmoid", lambda a: 1 / (1 + np.exp(-a)), -80.0, 80.0),
    # The array API's functions added in issue 15.
    ("log2", np.log2, 1e-3, 1e3), ("log10", np.log10, 1e-3, 1e3),
    ("ceil", np.ceil, -1e3, 1e3), ("floor", np.floor, -1e3, 1e3),
    ("trunc", np.trunc, -1e3, 1e3), ("round", np.round, -1e3, 1e3),
    ("sign", np.sign, -1.0, 1.0), ("signbit", np.signbit, -1.0, 1.0),
    ("isnan", np.isnan, -1.0, 1.0), ("isinf", np.isinf, -1.0, 1.0),
    ("isfinite", np.isfinite, -1.0, 1.0), ("square", np.square, -1e3, 1e3),
    ("positive", np.positive, -1.0, 1.0), ("reciprocal", np.reciprocal, 0.1, 1e3),
    ("logical_not", np.logical_not, -1.0, 1.0), ("conj", np.conj, -1.0, 1.0),
    ("real", np.real, -1.0, 1.0), ("imag", np.imag, -1.0, 1.0),
)
# (gpukit name, NumPy function, (low, high) of x1, (low, high) of x2) of each
# binary function on floats.
BINARY = (
    ("pow", np.power, (0.0, 10.0), (-10.0, 10.0)),
    ("atan2", np.arctan2, (-100.0, 100.0), (-100.0, 100.0)),
    ("hypot", np.hypot, (-1e3, 1e3), (-1e3, 1e3)),
    ("copysign", np.copysign, (-10.0, 10.0), (-10.0, 10.0)),
    ("logaddexp", np.logaddexp, (-50.0, 50.0), (-50.0, 50.0)),
    ("nextafter", np.nextafter, (-10.0, 10.0), (-10.0, 10.0)),
    ("floor_divide", np.floor_divide, (-1e3, 1e3), (-50.0, 50.0)),
    ("remainder", np.remainder, (-1e3, 1e3), (-50.0, 50.0)),
    ("logical_and", np.logical_and, (-1.0, 1.0), (-1.0, 1.0)),
    ("logical_or", np.logical_or, (-1.0, 1.0), (-1.0, 1.0)),
    ("logical_xor", np.logical_xor, (-1.0, 1.0), (-1.0, 1.0)),
)
# Powers by one plain value, the notebook idiom (x ** 2 in a squared error):
# (row name, exponent), on x in (0.5, 10).
POWERS = (("x ** 2", 2), ("x ** -1", -1), ("x ** 0.5", 0.5), ("x ** 2.5", 2.5))
# The functions of integers only, timed on int32 and int64 (not part of the
# float target; shown for reference): (name, NumPy function, arity).
INTEGER = (
    ("bitwise_and", np.bitwise_and, 2), ("bitwise_or", np.bitwise_or, 2),
    ("bitwise_xor", np.bitwise_xor, 2), ("bitwise_left_shift", np.left_shift, 2),
    ("bitwise_right_shift", np.right_shift, 2), ("bitwise_invert", np.invert, 1),
    ("floor_divide", np.floor_divide, 2), ("remainder", np.remainder, 2),
)
# Functions whose inputs get special values (NaN, +-inf, -0.0) in every 7th
# element, so that their checks see them.
SPECIAL_INPUTS = {"sign", "signbit", "isnan", "isinf", "isfinite", "logical_not", "copysign",
                  "nextafter", "logical_and", "logical_or", "logical_xor"}
REDUCTIONS = ("sum", "mean", "prod", "min", "max", "argmin", "argmax", "var", "std")
SHAPES = ((4096, 4096), (256, 256, 256))


def ulps(ours, theirs):
    """The largest |ours - theirs| in ULPs of theirs; NaN where only one side is NaN
    or the infinities differ."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    nan_ours, nan_theirs = np.isnan(ours), np.isnan(theirs)
    if (nan_ours != nan_theirs).any():
        return "NaN differs"
    finite = np.isfinite(theirs) & ~nan_theirs
    if (ours[~finite & ~nan_theirs] != theirs[~finite & ~nan_theirs]).any():
        return "inf differs"
    diff = np.abs(ours[finite].astype(np.float64) - theirs[finite]) / np.spacing(np.abs(theirs[finite]))
    return f"{diff.max() if diff.size else 0:.1f} ulp"


def with_specials(name, a):
    """a with NaN, +-inf and -0.0 in every 7th element when name wants them."""
    if name in SPECIAL_INPUTS:
        a = a.copy()
        a[::7] = np.resize(np.array([np.nan, np.inf, -np.inf, -0.0], a.dtype), a[::7].shape)
    return a


def compare(ours, theirs):
    """ulps() for float results, exact equality for bool and integer ones."""
    theirs = np.asarray(theirs)
    if theirs.dtype.kind != "f":
        return relative(ours, theirs, exact=True)
    return ulps(ours, theirs)


def relative(ours, theirs, exact):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if exact:
        return "equal" if np.array_equal(ours, theirs) else f"{(ours != theirs).sum()} differ"
    scale = np.maximum(np.abs(theirs.astype(np.float64)), np.finfo(theirs.dtype).tiny)
    error = np.abs(ours.astype(np.float64) - theirs) / scale
    return f"rel {np.nanmax(error):.1e}" if error.size else "-"


def table_rows(gk, repeat, device, only, dtypes):
    """Yields (function, dtype, shape, axis, gpukit s or error, NumPy s, check)."""
    rng = np.random.default_rng(14)
    for dtype in dtypes:
        for name, numpy_function, low, high in UNARY:
            if only and name not in only:
                continue
            a = with_specials(name, rng.uniform(low, high, TABLE_N).astype(dtype))
            theirs_time, _ = time_numpy(lambda: numpy_function(a), repeat)
            function = getattr(gk, name, None)
            if function is None:
                yield name, dtype, a.shape, None, "not in gpukit", theirs_time, "-"
                continue
            x = gk.asarray(a, device=device)
            ours_time, _ = time_numpy(lambda: function(x), repeat)
            check_text = compare(function(x).numpy(), numpy_function(a))
            yield name, dtype, a.shape, None, ours_time, theirs_time, check_text
        for name, numpy_function, (low1, high1), (low2, high2) in BINARY:
            if only and name not in only:
                continue
            a = with_specials(name, rng.uniform(low1, high1, TABLE_N).astype(dtype))
            b = with_specials(name, rng.uniform(low2, high2, TABLE_N).astype(dtype)[::-1].copy())
            theirs_time, _ = time_numpy(lambda: numpy_function(a, b), repeat)
            function = getattr(gk, name, None)
            if function is None:
                yield name, dtype, a.shape, None, "not in gpukit", theirs_time, "-"
                continue
            x, y = gk.asarray(a, device=device), gk.asarray(b, device=device)
            ours_time, _ = time_numpy(lambda: function(x, y), repeat)
            yield (name, dtype, a.shape, None, ours_time, theirs_time,
                   compare(function(x, y).numpy(), numpy_function(a, b)))
        for name, exponent in POWERS:
            if only and "pow" not in only:
                continue
            a = rng.uniform(0.5, 10.0, TABLE_N).astype(dtype)
            x = gk.asarray(a, device=device)
            theirs_time, _ = time_numpy(lambda: a ** exponent, repeat)
            ours_time, _ = time_numpy(lambda: x ** exponent, repeat)
            yield (name, dtype, a.shape, None, ours_time, theirs_time,
                   compare((x ** exponent).numpy(), a ** exponent))
        for shape in SHAPES:
            # Values near 1 keep prod finite and away from subnormals, which would
            # time the FPU's slow path rather than the reduction.
            a = rng.uniform(0.5, 1.5, shape).astype(dtype)
            x = gk.asarray(a, device=device)
            for name in REDUCTIONS:
                if only and name not in only:
                    continue
                for axis in (None,) + tuple(range(len(shape))):
                    numpy_function = getattr(np, name)
                    function = getattr(gk, name)
                    theirs_time, _ = time_numpy(lambda: numpy_function(a, axis=axis), repeat)
                    ours_time, _ = time_numpy(lambda: function(x, axis=axis), repeat)
                    check = relative(function(x, axis=axis).numpy(), numpy_function(a, axis=axis),
                                     exact=name.startswith("arg"))
                    yield name, dtype, shape, axis, ours_time, theirs_time, check
    for dtype in (np.int32, np.int64):
        for name, numpy_function, arity in INTEGER:
            if only and name not in only:
                continue
            bits = np.iinfo(dtype).bits
            a = rng.integers(-1000, 1000, TABLE_N).astype(dtype)
            # Shift counts inside the width; divisors without zeros.
            b = (rng.integers(0, bits, TABLE_N) if "shift" in name
                 else rng.integers(1, 50, TABLE_N) * rng.choice([-1, 1], TABLE_N)).astype(dtype)
            operands = (a, b)[:arity]
            theirs_time, _ = time_numpy(lambda: numpy_function(*operands), repeat)
            xs = [gk.asarray(o, device=device) for o in operands]
            function = getattr(gk, name)
            ours_time, _ = time_numpy(lambda: function(*xs), repeat)
            yield (name, dtype, a.shape, None, ours_time, theirs_time,
                   compare(function(*xs).numpy(), numpy_function(*operands)))


def print_table(build, repeat, device, only, dtypes):
    gk = import_gpukit(build)
    device = device or "cpu"
    print(f"\nthe table: gpukit {Path(gk.__file__).parent} on {device}, median of {repeat} runs "
          f"after 2 warm-up runs; ratio = NumPy time / gpukit time, target >= 1.0x every row")
    header = (f"{'function':<19} {'dtype':<8} {'shape':<14} {'axis':>4} {'gpukit s':>10} "
              f"{'NumPy s':>10} {'ratio':>7} {'met':>4}  check (gpukit vs NumPy)")
    print(header)
    print("-" * len(header))
    missed = 0
    for name, dtype, shape, axis, ours, theirs, check in table_rows(gk, repeat, device, only,
                                                                    dtypes):
        shape_text = "x".join(str(d) for d in shape)
        axis_text = "-" if axis is None else str(axis)
        label = f"{name:<19} {np.dtype(dtype).name:<8} {shape_text:<14} {axis_text:>4}"
        if isinstance(ours, str):
            print(f"{label} {'-':>10} {theirs:>10.4f} {'-':>7} {'-':>4}  {ours}")
            missed += 1
            continue
        ratio = theirs / ours
        met = "yes" if ratio >= 1.0 else "NO"
        missed += ratio < 1.0
        print(f"{label} {ours:>10.4f} {theirs:>10.4f} {ratio:>6.2f}x {met:>4}  {check}", flush=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average after the table: {load}")
    print(f"rows below 1.0x or missing: {missed}")


def print_cases(args, rows, copy_row, ours_info):
    if ours_info:
        print(f"gpukit's device: {ours_info['device']} ({ours_info['device_description']}); "
              f"its BLAS: {ours_info['blas']}, {ours_info['blas_threads']} threads")
    print(f"\nmedian of {args.repeat} runs ({args.matmul_repeat} for matmul) after 2 warm-up runs; "
          f"ratio = NumPy time / gpukit time (> 1: gpukit faster)\n")
    header = (f"{'operation':<10} {'gpukit s':>10} {'NumPy s':>10} {'ratio':>7} {'target':>7} "
              f"{'met':>4}  {'gpukit rate':>15} {'NumPy rate':>15} {'of copy bw':>11}  "
              f"{'check (gpukit / NumPy)'}")
    print(header)
    print("-" * len(header))
    for case, ours, (median, _, bytes_, flops, numpy_check) in rows:
        target = TARGETS.get(case)
        label = "copy (C)" if case == "copy" else case  # plain C on gpukit's side
        target_text = f">={target}x" if target else "-"
        if "error" in ours:
            print(f"{label:<10} {'-':>10} {median:>10.4f} {'-':>7} {target_text:>7} {'-':>4}  "
                  f"{'-':>15} {rate(bytes_, flops, median):>15} {'-':>11}  "
                  f"gpukit failed: {ours['error']}")
            continue
        ratio = median / ours["median_s"]
        met = ("yes" if ratio >= target else "NO") if target else "-"
        print(f"{label:<10} {ours['median_s']:>10.4f} {median:>10.4f} {ratio:>6.2f}x "
              f"{target_text:>7} {met:>4}  {rate(bytes_, flops, ours['median_s']):>15} "
              f"{rate(bytes_, flops, median):>15} {share(ours, copy_row):>11}  "
              f"{ours['check']} / {numpy_check}")
    if copy_row:
        threads = copy_row["copy_threads"]
        print(f"\nmeasured memory bandwidth: {copy_row['gb_per_s']:.1f} GB/s (the C copy, memcpy "
              f"on {threads} thread{'s' if threads != 1 else ''}: the faster of 1 and one per "
              f"CPU); per element add moves 12 bytes, sum 4, copy 8 (reads + writes)")
    else:
        print("\nno copy bandwidth measured (run the copy case)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=default_build(),
                        help="the build holding bench/array_bench (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=20, help="timed runs per case")
    parser.add_argument("--matmul-repeat", type=int, default=5, help="timed runs of matmul")
    parser.add_argument("--device", default=None,
                        help="gpukit's device (default: gk_device_default())")
    parser.add_argument("--cases", default=",".join(CASES),
                        help="comma-separated cases (empty: only the table)")
    parser.add_argument("--table", action="store_true",
                        help="also print the table of every elementwise function and reduction")
    parser.add_argument("--table-repeat", type=int, default=7, help="timed runs per table row")
    parser.add_argument("--only", default="",
                        help="the table's functions to run, comma-separated (default: all)")
    parser.add_argument("--dtypes", default="float32,float64",
                        help="the table's float dtypes, comma-separated (float16, float32, "
                             "float64; default: %(default)s)")
    args = parser.parse_args()
    bench = args.build / "bench" / "array_bench"
    cases = [c for c in args.cases.split(",") if c]
    if cases and not bench.is_file():
        sys.exit(f"array_vs_numpy: {bench} does not exist: configure {args.build} with "
                 f"-DGPUKIT_BUILD_TESTS=ON and build it (cmake --build {args.build})")

    blas, blas_threads = numpy_blas()
    threads = ", ".join(f"{v}={os.environ[v]}" for v in THREAD_VARIABLES if v in os.environ)
    print(f"gpukit {bench.resolve()}")
    print(f"NumPy {np.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average before the run: {load} (other work on these CPUs skews the times)")
    print(f"thread variables: {threads or 'none set (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS unset)'}")
    print(f"NumPy's BLAS: {blas}, {blas_threads if blas_threads is not None else '?'} threads")

    rows, copy_row, ours_info = [], None, None
    for case in cases:
        repeat = args.matmul_repeat if case == "matmul" else args.repeat
        ours = gpukit_case(bench, case, repeat, args.device)  # one after the other, never both
        theirs = numpy_case(case, repeat)
        if "error" not in ours:
            ours_info = ours_info or ours
            if case == "copy":
                copy_row = ours
        rows.append((case, ours, theirs))

    if rows:
        print_cases(args, rows, copy_row, ours_info)
    if args.table:
        print_table(args.build, args.table_repeat, args.device,
                    {name for name in args.only.split(",") if name},
                    [np.dtype(name).type for name in args.dtypes.split(",") if name])


if __name__ == "__main__":
    main()
