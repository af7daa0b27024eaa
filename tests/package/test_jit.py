"""@gpukit.jit: Python functions as kernels on every device (the cpu, whose
kernels run on the OpenCL driver for the CPU, PoCL's opencl:0:0 here, and
cuda on a GPU machine), checked against NumPy: the tutorial's Numba labs
(jit_kernels.py), each construct of the Python subset, each dtype, each
error with its message, translation snapshots, pickling, host arrays,
the disk cache from a fresh process, and the CUDA translation compiled
by NVRTC against the fake driver."""
import math
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpukit
import jit_kernels as k
from conftest import DEVICES, FAKE_CUDA, SOURCE

SNAPSHOTS = SOURCE / "tests" / "package" / "jit_snapshots"


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def put(array, device):
    return gpukit.asarray(np.array(array, order="C"), device=device)


def host(array):
    return array.cpu().numpy()


def blocks(n, threads=256):
    return (n + threads - 1) // threads


# ---- the tutorial's labs ----------------------------------------------------

def test_copy_range(device):
    src = put(np.arange(10), device)
    dst = gpukit.zeros((10,), dtype=gpukit.int64, device=device)
    k.copy[1, 32](src, dst)
    np.testing.assert_array_equal(host(dst), np.arange(10))


def test_double_random_values(device):
    values = np.random.default_rng(0).random(3_000_000)
    x = put(values, device)
    k.double[blocks(values.size), 256](x)
    np.testing.assert_array_equal(host(x), values * 2)


def test_fizzbuzz_to_fifty_million(device):
    n = 50_000_000
    codes = gpukit.zeros((n,), dtype=gpukit.uint8, device=device)
    k.fizzbuzz.forall(n)(codes)
    got = host(codes)
    assert np.flatnonzero(got == 1)[-1] + 1 == 49_999_998  # the last Fizz
    head = np.arange(1, 31)
    want = np.where(head % 15 == 0, 3, np.where(head % 5 == 0, 2, np.where(head % 3 == 0, 1, 0)))
    np.testing.assert_array_equal(got[:30], want)


def numpy_blur(image):
    padded = np.pad(image, ((1, 1), (1, 1), (0, 0)))
    ones = np.pad(np.ones(image.shape[:2]), 1)
    total = sum(padded[1 + dx:padded.shape[0] - 1 + dx, 1 + dy:padded.shape[1] - 1 + dy]
                for dx in (-1, 0, 1) for dy in (-1, 0, 1))
    count = sum(ones[1 + dx:ones.shape[0] - 1 + dx, 1 + dy:ones.shape[1] - 1 + dy]
                for dx in (-1, 0, 1) for dy in (-1, 0, 1))
    return total / count[:, :, None]


def test_blur_five_passes_3d_grid(device):
    image = np.random.default_rng(1).random((116, 434, 4))
    a, b = put(image, device), gpukit.zeros((116, 434, 4), dtype=gpukit.float64, device=device)
    want = image
    for _ in range(5):
        k.blur[(blocks(116, 8), blocks(434, 8), 1), (8, 8, 4)](a, b)
        a, b = b, a
        want = numpy_blur(want)
    np.testing.assert_allclose(host(a), want, rtol=1e-12)


def test_grayscale_2d_grid(device):
    rgb = np.random.default_rng(2).random((100, 70, 3))
    out = gpukit.zeros((100, 70), dtype=gpukit.float64, device=device)
    k.grayscale[(blocks(100, 16), blocks(70, 16)), (16, 16)](put(rgb, device), out)
    want = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
    np.testing.assert_allclose(host(out), want, rtol=1e-14)


def test_shared_memory_reduction(device):
    values = np.random.default_rng(3).random(10_000).astype(np.float32)
    count = blocks(values.size, k.THREADS)
    partial = gpukit.zeros((count,), dtype=gpukit.float32, device=device)
    k.block_sum[count, k.THREADS](put(values, device), partial)
    want = [values[b * k.THREADS:(b + 1) * k.THREADS].sum(dtype=np.float64) for b in range(count)]
    np.testing.assert_allclose(host(partial), want, rtol=1e-5)


def test_histogram_with_atomics(device):
    values = np.random.default_rng(4).integers(0, 1000, 100_000)
    bins = gpukit.zeros((16,), dtype=gpukit.int32, device=device)
    k.histogram.forall(values.size)(put(values, device), bins)
    np.testing.assert_array_equal(host(bins), np.bincount(values % 16, minlength=16))


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_atomic_max_min_add(device, dtype):
    values = (np.random.default_rng(5).random(5000) * 1000).astype(dtype)
    result = put(np.array([values[0], values[0]], dtype=dtype), device)
    total = gpukit.zeros((1,), dtype=dtype, device=device)
    k.extremes.forall(values.size)(put(values, device), result, total)
    np.testing.assert_array_equal(host(result), [values.max(), values.min()])
    np.testing.assert_allclose(host(total)[0], values.sum(dtype=np.float64), rtol=1e-5)


def test_device_functions(device):
    a = put(np.linspace(-3, 3, 13), device)
    k.clamp_all.forall(13)(a)
    np.testing.assert_array_equal(host(a), np.clip(np.linspace(-3, 3, 13), -1, 1) + 2)


# ---- the Python subset --------------------------------------------------------

@gpukit.jit
def python_arithmetic(ints, floats, out_int, out_float):
    i = gpukit.grid(1)
    if i < ints.size:
        a = ints[i]
        b = floats[i]
        out_int[i, 0] = a // 3
        out_int[i, 1] = a % -4
        out_int[i, 2] = a ** 2
        out_int[i, 3] = -a // 2
        out_int[i, 4] = math.floor(b)
        out_int[i, 5] = abs(a) + min(a, 3, 7) + max(a, -2)
        out_int[i, 6] = (a > 0 and b > 0) or not a
        out_int[i, 7] = a << 2 | 1 ^ (a & 5)
        out_float[i, 0] = a / 4
        out_float[i, 1] = b % 1.5
        out_float[i, 2] = b // 0.75
        out_float[i, 3] = math.sqrt(abs(b)) + math.atan2(b, 2.0)
        out_float[i, 4] = b ** 2.0
        out_float[i, 5] = 1.0 if b > 0 else -1.0
        out_float[i, 6] = math.pi * math.hypot(b, 1.0)
        out_float[i, 7] = float(a) + int(b) + True


def test_python_semantics(device):
    ints = np.arange(-20, 20)
    floats = np.linspace(-5, 5, 40)
    out_int = gpukit.zeros((40, 8), dtype=gpukit.int64, device=device)
    out_float = gpukit.zeros((40, 8), dtype=gpukit.float64, device=device)
    python_arithmetic.forall(40)(put(ints, device), put(floats, device), out_int, out_float)
    want_int = [[a // 3, a % -4, a ** 2, -a // 2, math.floor(b), abs(a) + min(a, 3, 7) + max(a, -2),
                 int(bool((a > 0 and b > 0) or not a)), a << 2 | 1 ^ (a & 5)]
                for a, b in zip(ints.tolist(), floats.tolist())]
    want_float = [[a / 4, b % 1.5, b // 0.75, math.sqrt(abs(b)) + math.atan2(b, 2.0), b ** 2.0,
                   1.0 if b > 0 else -1.0, math.pi * math.hypot(b, 1.0), float(a) + int(b) + True]
                  for a, b in zip(ints.tolist(), floats.tolist())]
    np.testing.assert_array_equal(host(out_int), want_int)
    np.testing.assert_allclose(host(out_float), want_float, rtol=1e-14, atol=1e-15)


@gpukit.jit
def control_flow(out, n, scale, flag):
    i = gpukit.grid(1)
    if i >= out.shape[0]:
        return
    total = 0
    for j in range(n, 0, -2):        # a negative step
        if j == 5:
            continue
        total += j
    steps = 0
    value = i
    while True:                      # the Collatz count, with break
        if value <= 1:
            break
        value = value // 2 if value % 2 == 0 else 3 * value + 1
        steps += 1
    x, y = i, total                  # tuple unpacking, then a swap
    x, y = y, x
    last = -1
    for last in range(3):
        pass
    total = total * scale            # an int variable widened to float by a later assignment
    out[i, 0] = total
    out[i, 1] = steps
    out[i, 2] = x - y
    out[i, 3] = out[-1 - i, 3] if flag else last   # a negative index counts from the end
    out[i, 4] = out.shape[1] + out.ndim + out.size


def test_control_flow(device):
    rows = 12
    out = gpukit.zeros((rows, 5), dtype=gpukit.float64, device=device)
    control_flow.forall(rows)(out, 11, 0.5, False)
    got = host(out)

    def collatz(v):
        steps = 0
        while v > 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            steps += 1
        return steps
    total = sum(j for j in range(11, 0, -2) if j != 5)
    np.testing.assert_array_equal(got[:, 0], total * 0.5)
    np.testing.assert_array_equal(got[:, 1], [collatz(i) for i in range(rows)])
    np.testing.assert_array_equal(got[:, 2], [total - i for i in range(rows)])
    np.testing.assert_array_equal(got[:, 3], 2)
    np.testing.assert_array_equal(got[:, 4], 5 + 2 + rows * 5)


@gpukit.jit
def wrap_after_change(a, out):
    i = gpukit.grid(1)
    if i < a.size:
        j = i
        out[i] = a[j]
        j = i - a.size    # negative from here: every read through j wraps
        out[i] += 10 * a[j]


def test_indices_that_may_be_negative_wrap(device):
    """An index is left unwrapped only when no value it takes can be
    negative (the snapshots show grid(1) indices unwrapped)."""
    a = put(np.arange(1.0, 9.0), device)
    out = gpukit.zeros((8,), dtype=gpukit.float64, device=device)
    wrap_after_change.forall(8)(a, out)
    np.testing.assert_array_equal(host(out), np.arange(1.0, 9.0) * 11)
    assert "gkjit_wrap((gk_i64)(v_j)" in wrap_after_change.dialect_source(a, out)


@gpukit.jit
def scalar_kinds(out, a, b, c, d):
    out[0] = a
    out[1] = b
    out[2] = c
    out[3] = d * 3


def test_scalar_arguments_specialise(device):
    out = gpukit.zeros((4,), dtype=gpukit.float64, device=device)
    scalar_kinds[1, 1](out, 7, 2.5, True, np.float32(0.1))
    np.testing.assert_array_equal(host(out), [7, 2.5, 1, np.float32(0.1) * np.float64(3)])
    scalar_kinds[1, 1](out, np.uint64(2 ** 63 + 5), np.int8(-3), np.bool_(False), 1)
    np.testing.assert_array_equal(host(out), [2.0 ** 63, -3, 0, 3])
    kinds = {key[1:] for key in scalar_kinds.signatures if key[0] == device}
    assert len(kinds) == 2, "one translation per signature"


ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype(device, dtype):
    values = gpukit.astype(gpukit.asarray(np.array([0, 1, 2, 3, 100, 127, -1, -2]).astype(
        "int64")), dtype).to(device)
    out = gpukit.zeros((8,), dtype=dtype, device=device)
    k.copy.forall(8)(values, out)
    np.testing.assert_array_equal(host(gpukit.astype(out, gpukit.float64)),
                                  host(gpukit.astype(values, gpukit.float64)))


def test_views_of_any_layout(device):
    base = np.arange(60.0).reshape(6, 10)
    src = put(base, device)
    view = gpukit.flip(src, axis=1)[1:5, ::3]   # negative and step strides
    out = gpukit.zeros(view.shape, dtype=gpukit.float64, device=device)

    @gpukit.jit
    def copy2(a, b):
        i, j = gpukit.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            b[i, j] = a[i, j]
    copy2[(1, 1), (8, 8)](view, out)
    np.testing.assert_array_equal(host(out), np.flip(base, axis=1)[1:5, ::3])


# ---- arguments, devices, launches ----------------------------------------------

def test_numpy_arrays_as_arguments():
    """On the cpu a NumPy array is used in place; elsewhere it is copied to
    the default device and written back, as Numba does."""
    values = np.arange(5, dtype=np.float64)
    k.double[1, 32](values)
    np.testing.assert_array_equal(values, np.arange(5) * 2)
    others = [d for d in DEVICES if d != "cpu"]
    if others:
        with gpukit.device(others[0]):
            k.double[1, 32](values)
        np.testing.assert_array_equal(values, np.arange(5) * 4)


def read_only_arrays(device):
    frozen = np.zeros(4, dtype=np.int64)
    frozen.flags.writeable = False
    stretched = gpukit.broadcast_to(put(np.zeros(1, dtype=np.int64), device), (4,))
    return {"read-only NumPy": frozen, "broadcast view": stretched, "list": [0, 0, 0, 0]}


@pytest.mark.parametrize("kernel", ["copy", "double", "histogram",
                                    "seven_through_a_device_function"])
def test_writes_into_read_only_arguments_are_refused(device, kernel):
    """NumPy's ValueError, where a store into a read-only NumPy array or a
    broadcast view wrote memory that stands for many elements or that its
    owner froze, and a list's copy took the results away with it."""
    for what, target in read_only_arrays(device).items():
        args = {"copy": (put(np.arange(4), device), target), "double": (target,),
                "histogram": (put(np.arange(4), device), target),
                "seven_through_a_device_function": (target,)}[kernel]
        with gpukit.device(device), pytest.raises(ValueError, match="read-only"):
            getattr(k, kernel)[1, 32](*args)
        np.testing.assert_array_equal(np.asarray(gpukit.asarray(target).cpu()), 0, err_msg=what)


def test_read_only_arguments_are_read(device):
    for what, source in read_only_arrays(device).items():
        dst = gpukit.full((4,), 9, dtype=gpukit.int64, device=device)
        with gpukit.device(device):
            k.copy[1, 32](source, dst)
        np.testing.assert_array_equal(host(dst), 0, err_msg=what)


def test_arrays_on_two_devices():
    others = [d for d in DEVICES if d != "cpu"]
    if not others:
        pytest.skip("needs a second device")
    a = gpukit.zeros((3,), device="cpu")
    b = gpukit.zeros((3,), device=others[0])
    with pytest.raises(ValueError, match="two devices"):
        k.copy[1, 32](a, b)


def test_launch_errors():
    x = gpukit.zeros((4,))
    with pytest.raises(TypeError, match=r"kernel\[blocks, threads\]"):
        k.double(x)
    with pytest.raises(TypeError, match="device function"):
        k.clamp[1, 1]
    with pytest.raises(TypeError, match="takes 1 argument but 2 were given"):
        k.double[1, 32](x, x)
    with pytest.raises(ValueError, match="threads"):
        k.double[1, 0](x)
    with pytest.raises(TypeError, match="kernel argument 0"):
        k.double[1, 32]("text")
    with pytest.raises(TypeError, match="complex"):
        k.double[1, 32](gpukit.zeros((2,), dtype=gpukit.complex64))


def test_pickles():
    launch = pickle.loads(pickle.dumps(k.double[1, 32]))
    x = gpukit.ones((4,))
    launch(x)
    np.testing.assert_array_equal(host(x), 2)
    assert pickle.loads(pickle.dumps(k.clamp)).is_device_function


def test_pickles_by_value_with_its_source(tmp_path):
    """A kernel of __main__ (a script, a notebook) sent by value, as Dask
    sends it to a worker, runs in a process where no file holds its source."""
    script = tmp_path / "sender.py"
    script.write_text(textwrap.dedent("""
        import subprocess, sys
        import cloudpickle, gpukit

        @gpukit.jit
        def triple(values):
            i = gpukit.grid(1)
            if i < values.size:
                values[i] *= 3

        receiver = ("import pickle, sys, gpukit; kernel = pickle.loads(sys.stdin.buffer.read());"
                    "v = gpukit.arange(10.0); kernel[1, 32](v); print(float(gpukit.sum(v)))")
        done = subprocess.run([sys.executable, "-c", receiver], input=cloudpickle.dumps(triple),
                              capture_output=True)
        print(done.stdout.decode().strip(), done.stderr.decode()[-400:])
    """))
    script.chmod(0o644)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, GPUKIT_NVML_LIBRARY="/nonexistent"))
    assert result.stdout.split()[0] == "135.0", result.stdout + result.stderr


def test_big_grids(device):
    """2^20 blocks of 1024 threads (the fizzbuzz kernel's bound check idles
    the rest)."""
    if device.startswith("opencl") or device == "cpu":
        info = gpukit.zeros((1 << 20,), dtype=gpukit.uint8, device=device)
        k.fizzbuzz[1 << 10, 1024](info)
        assert host(info)[14] == 3


# ---- what is refused, and where ------------------------------------------------

def unsupported_try(x):
    try:
        x[0] = 1
    except Exception:
        pass


def unsupported_slice(x):
    x[0] = x[1:3]


def unsupported_call(x):
    print(x[0])


def type_change(x):
    y = 0
    y = gpukit.shared.array(4, gpukit.float32)
    x[0] = y[0]


def kernel_returns(x):
    return x[0]


@gpukit.jit(device=True)
def recursive_device(n):
    return 1 if n <= 1 else n * recursive_device(n - 1)


def calls_recursive(x):
    x[0] = recursive_device(5)


def unknown_name(x):
    x[0] = not_defined_anywhere  # noqa: F821


def zero_step(x):
    for i in range(0, 4, 0):
        x[0] = i


@pytest.mark.parametrize("function, error, message, where", [
    (unsupported_try, NotImplementedError, "try/except is not supported", None),
    (unsupported_slice, NotImplementedError, "slicing an array inside a kernel", None),
    (unsupported_call, NotImplementedError, "calling <built-in function print>", None),
    (type_change, TypeError, "variable 'y' would change type from int64 to a shared array",
     None),
    (kernel_returns, TypeError, "a kernel returns nothing", None),
    # Named where it happens: inside the device function.
    (calls_recursive, NotImplementedError, "a recursive device function is not supported",
     recursive_device.py_func),
    (unknown_name, TypeError, "name 'not_defined_anywhere' is not defined", None),
    # Python's ValueError, where the loop would never end.
    (zero_step, ValueError, "range() arg 3 must not be zero", None),
])
def test_refused_at_first_launch(function, error, message, where):
    kernel = gpukit.jit(function)   # decorating never fails: the launch translates
    with pytest.raises(error) as caught:
        kernel[1, 1](gpukit.zeros((4,)))
    text = str(caught.value)
    assert message in text
    where = where or function
    line = where.__code__.co_firstlineno
    assert f"test_jit.py:{line}" in text or f"test_jit.py:{line + 1}" in text or \
        f"test_jit.py:{line + 2}" in text, text
    assert where.__name__ in text


# ---- the generated dialect ------------------------------------------------------

@pytest.mark.parametrize("name, args", [
    ("double", lambda: (gpukit.zeros((4,), dtype=gpukit.float64),)),
    ("block_sum", lambda: (gpukit.zeros((4,), dtype=gpukit.float32),
                           gpukit.zeros((1,), dtype=gpukit.float32))),
    ("histogram", lambda: (gpukit.zeros((4,), dtype=gpukit.int64),
                           gpukit.zeros((4,), dtype=gpukit.int32))),
])
def test_translation_snapshots(name, args):
    """The kernel functions as translated (after the shared prelude); a
    change to the translator shows here. Regenerate with
    GPUKIT_UPDATE_SNAPSHOTS=1."""
    source = getattr(k, name).dialect_source(*args())
    kernel = source[source.index("GK_KERNEL"):]
    helpers = source[source.index("#endif\n#if defined(GK_OPENCL) && defined(cl_khr_int64_ext"):]
    helpers = helpers[helpers.index("#endif\n", 10) + 7:source.index("GK_KERNEL") - len(source)]
    snapshot = SNAPSHOTS / f"{name}.gk"
    text = helpers + kernel
    if os.environ.get("GPUKIT_UPDATE_SNAPSHOTS") == "1":
        snapshot.write_text(text)
    assert text == snapshot.read_text()


# ---- caches ----------------------------------------------------------------------

COMPILE_TWICE = """
import inspect, sys
sys.path.insert(0, {tests!r})
import gpukit, jit_kernels as k
if {cached!r}:
    def no_source(*args):
        raise AssertionError("translated again: the source was read")
    inspect.getsource = no_source
x = gpukit.zeros((8,), dtype=gpukit.float64, device={device!r})
k.double[1, 32](x)
assert x[0] == 0
print("ran")
"""


def test_disk_cache_from_a_fresh_process(py, tmp_path, device):
    """A second process neither translates (the source is never read) nor
    compiles (no cache file is written again)."""
    cache = tmp_path / "kernel-cache"
    tests = str(SOURCE / "tests" / "package")
    env = dict(GPUKIT_CACHE_DIR=str(cache), PATH=os.environ.get("PATH", ""))
    assert "ran" in py(COMPILE_TWICE.format(tests=tests, device=device, cached=False),
                       **env).stdout
    first = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    # The translation and the compiled kernel (and, on a GPU device, the
    # built-in program that zeros x).
    assert len(first) >= 2, first
    assert "ran" in py(COMPILE_TWICE.format(tests=tests, device=device, cached=True),
                       **env).stdout
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == first


CHANGED_GLOBAL = """
import sys
sys.path.insert(0, {tests!r})
import gpukit, jit_kernels as k
k.THREADS = {threads}
print(k.block_sum.dialect_source(gpukit.zeros((4,), dtype=gpukit.float32),
                                 gpukit.zeros((1,), dtype=gpukit.float32)).count("[{threads}]"))
"""


MODULE_CONSTANT = """
import math, sys, types
sys.path.insert(0, {tests!r})
import gpukit
config = types.ModuleType("config")
config.SCALE = {scale}
sys.modules["config"] = config
import config
import jit_module_constant as m
x = gpukit.ones((4,))
m.scale[1, 32](x)
print(int(x[0]))
"""


def test_cached_translation_follows_globals(py, tmp_path):
    """A global the kernel reads as a constant is part of the cache key,
    and so is a module's number it reads (config.SCALE): changing either
    translates again."""
    env = dict(GPUKIT_CACHE_DIR=str(tmp_path / "cache"), PATH=os.environ.get("PATH", ""))
    tests = str(SOURCE / "tests" / "package")
    for threads in (128, 64, 128):
        out = py(CHANGED_GLOBAL.format(tests=tests, threads=threads), **env).stdout
        assert out.strip() == "1", (threads, out)
    (tmp_path / "jit_module_constant.py").write_text(
        "import config\nimport gpukit\n\n\n@gpukit.jit\ndef scale(x):\n"
        "    i = gpukit.grid(1)\n    if i < x.size:\n        x[i] = x[i] * config.SCALE\n")
    for scale in (3, 5, 3):
        out = py(MODULE_CONSTANT.format(tests=str(tmp_path), scale=scale), **env).stdout
        assert out.strip() == str(scale), (scale, out)


RUN_EDITED = """
import sys
sys.path.insert(0, {where!r})
import gpukit, edited_kernel
x = gpukit.ones((4,), device="cpu")
edited_kernel.kernel[1, 4](x)
print(int(x[0]))
"""

# What a kernel reads beyond its own code, in files edited between runs:
# {value} is what x[i] becomes.
EDITED_READS = {
    "class attribute": {
        "edited_kernel.py": "import gpukit\n\n\nclass Cfg:\n    N = {value}\n\n\n"
                            "@gpukit.jit\ndef kernel(x):\n    x[gpukit.grid(1)] = Cfg.N\n",
    },
    "device function in a module": {
        "edited_helpers.py": "import gpukit\n\n\n@gpukit.jit(device=True)\ndef f(x):\n"
                             "    return x * {value}\n",
        "edited_kernel.py": "import gpukit\nimport edited_helpers\n\n\n@gpukit.jit\n"
                            "def kernel(x):\n    i = gpukit.grid(1)\n"
                            "    x[i] = edited_helpers.f(x[i])\n",
    },
    "closure of a device function": {
        "edited_kernel.py": "import gpukit\n\n\ndef make(k):\n"
                            "    @gpukit.jit(device=True)\n    def times(x):\n"
                            "        return x * k\n    return times\n\n\n"
                            "times = make({value})\n\n\n@gpukit.jit\ndef kernel(x):\n"
                            "    i = gpukit.grid(1)\n    x[i] = times(x[i])\n",
    },
}


@pytest.mark.parametrize("case", EDITED_READS)
def test_cached_translation_follows_what_it_reads(py, tmp_path, case):
    """The disk cache's key holds what the translation read: a class's
    number (Cfg.N), a device function reached through a module (its code)
    and a device function's closure. Each was left out, so a file edited
    between runs gave the first run's answer. Back to a value seen before,
    the cache still hits: nothing is written."""
    cache = tmp_path / "cache"
    env = dict(GPUKIT_CACHE_DIR=str(cache), PATH=os.environ.get("PATH", ""),
               PYTHONDONTWRITEBYTECODE="1")
    for run, value in enumerate((7, 8, 7, 8)):
        for name, text in EDITED_READS[case].items():
            (tmp_path / name).write_text(text.format(value=value))
        out = py(RUN_EDITED.format(where=str(tmp_path)), **env).stdout
        assert out.strip() == str(value), (case, value, out)
        files = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
        if run >= 2:
            assert files == written, case
        written = files


# ---- CUDA: the translation compiles with NVRTC (the fake driver runs nothing) ----

CUDA_FAKE = """
import sys, ctypes, os
sys.path.insert(0, {tests!r})
import numpy as np, gpukit, jit_kernels as k
d = "cuda:0"
k.double[1, 32](gpukit.zeros((8,), dtype=gpukit.float64, device=d))
k.blur[(2, 2, 1), (8, 8, 4)](gpukit.zeros((9, 9, 4), device=d), gpukit.zeros((9, 9, 4), device=d))
k.block_sum[1, k.THREADS](gpukit.zeros((8,), dtype=gpukit.float32, device=d),
                          gpukit.zeros((1,), dtype=gpukit.float32, device=d))
for dtype in ("int32", "uint32", "int64", "uint64", "float32", "float64"):
    k.extremes.forall(8)(gpukit.zeros((8,), dtype=dtype, device=d),
                         gpukit.zeros((2,), dtype=dtype, device=d),
                         gpukit.zeros((1,), dtype=dtype, device=d))
k.clamp_all.forall(8)(gpukit.zeros((8,), dtype=gpukit.float32, device=d))
name = ctypes.create_string_buffer(128)
dims = (ctypes.c_uint * 6)()
lib = ctypes.CDLL(os.environ["GPUKIT_CUDA_LIBRARY"])
stream = ctypes.c_void_p()
params = ctypes.create_string_buffer(4096)
size = ctypes.c_size_t(4096)
lib.fake_cuda_last_launch(name, 128, dims, ctypes.byref(stream), params, ctypes.byref(size))
print("last", name.value.decode(), list(dims))
"""


FOREIGN_CUDA = """
import ctypes, os, sys
sys.path.insert(0, {tests!r})
import numpy as np, gpukit, jit_kernels as k

class Foreign:
    # Another library's CUDA array (CuPy's, PyTorch's): only the protocol.
    def __init__(self, owner):
        self.owner = owner
        self.__cuda_array_interface__ = owner.__cuda_array_interface__

owner = gpukit.zeros((8,), dtype=gpukit.float64, device="cuda:0")
k.double[1, 32](Foreign(owner))      # on its CUDA device, in place: no copy to the cpu
lib = ctypes.CDLL(os.environ["GPUKIT_CUDA_LIBRARY"])
name = ctypes.create_string_buffer(128)
dims = (ctypes.c_uint * 6)()
stream = ctypes.c_void_p()
params = ctypes.create_string_buffer(4096)
size = ctypes.c_size_t(4096)
lib.fake_cuda_last_launch(name, 128, dims, ctypes.byref(stream), params, ctypes.byref(size))
print("launch", name.value.decode())
try:
    k.copy[1, 32](Foreign(owner), gpukit.zeros((8,), dtype=gpukit.float64, device="cpu"))
except ValueError as error:
    print("refused", error)
"""


def test_cuda_array_interface_objects_in_place(py):
    """Objects with __cuda_array_interface__ pick their CUDA device for the
    launch (the fake driver records it there; a copy to the default cpu
    device would launch nothing on CUDA), and mixing them with arrays
    elsewhere is refused. (NVRTC's cubin carries no parameter sizes for the
    fake to record, so the pointer itself is checked on a real GPU.)"""
    if not FAKE_CUDA.exists():
        pytest.skip("the fake CUDA driver is not built")
    out = py(FOREIGN_CUDA.format(tests=str(SOURCE / "tests" / "package")),
             GPUKIT_CUDA_LIBRARY=str(FAKE_CUDA), check=False)
    if "NVRTC" in out.stderr and "cannot load" in out.stderr:
        pytest.skip("no NVRTC here")
    assert out.returncode == 0, out.stderr
    assert "launch gkjitk_double" in out.stdout, out.stdout
    assert "refused kernel arguments 0 and 1 are arrays on two devices (cuda:0 and cpu)" in \
        out.stdout, out.stdout


@pytest.mark.skipif(not any(str(d).startswith("cuda") for d in gpukit.devices()),
                    reason="needs a CUDA GPU (the fake driver runs no kernels)")
def test_cupy_and_torch_arrays_written_in_place():
    """On a real GPU: CuPy arrays and PyTorch tensors are kernel arguments
    as they are, zero-copy, written in place (their memory, their device)."""
    makers = []
    try:
        import cupy
        makers.append(lambda: cupy.arange(6, dtype=cupy.float64))
    except ImportError:
        pass
    try:
        import torch
        makers.append(lambda: torch.arange(6, dtype=torch.float64, device="cuda"))
    except ImportError:
        pass
    if not makers:
        pytest.skip("neither CuPy nor PyTorch imports")
    for make in makers:
        x = make()
        pointer = x.__cuda_array_interface__["data"][0]
        k.double.forall(6)(x)
        gpukit.synchronize()
        assert x.__cuda_array_interface__["data"][0] == pointer
        np.testing.assert_array_equal(np.asarray(gpukit.asarray(x).copy_to_host()),
                                      [0, 2, 4, 6, 8, 10])


def test_cuda_translation_compiles_with_nvrtc(py):
    if not FAKE_CUDA.exists():
        pytest.skip("the fake CUDA driver is not built")
    out = py(CUDA_FAKE.format(tests=str(SOURCE / "tests" / "package")),
             GPUKIT_CUDA_LIBRARY=str(FAKE_CUDA), check=False)
    if "NVRTC" in out.stderr and "cannot load" in out.stderr:
        pytest.skip("no NVRTC here")
    assert out.returncode == 0, out.stderr
    assert "last gkjitk_clamp_all [1, 1, 1, 256, 1, 1]" in out.stdout, out.stdout


# ---- Numba's names for moving data and waiting -----------------------------------

def test_to_device_copy_to_host_synchronize(device):
    values = np.arange(6.0)
    on_device = gpukit.to_device(values, device)
    assert on_device.device == device
    on_device[0] = 7                       # a copy: the NumPy array is untouched
    assert values[0] == 0
    k.double.forall(6)(on_device)
    gpukit.synchronize()                   # every device in use
    gpukit.synchronize(device)
    back = on_device.copy_to_host()
    assert isinstance(back, np.ndarray)
    np.testing.assert_array_equal(back, [14, 2, 4, 6, 8, 10])
    back[1] = -1                           # a copy too
    assert on_device.copy_to_host()[1] == 2
    with gpukit.device(device):
        assert gpukit.to_device(values).device == device
    with pytest.raises(ValueError, match="is not a device name"):
        gpukit.synchronize("tpu:0")


def test_copy_to_host_into_an_array(device):
    x = gpukit.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=device)
    target = np.full((3, 4), -1, dtype=np.float32)
    assert x.copy_to_host(ary=target) is target     # filled in place, as in Numba
    np.testing.assert_array_equal(target, np.arange(12).reshape(3, 4))
    x.mT.copy_to_host(target.reshape(4, 3))          # a strided view: C order
    np.testing.assert_array_equal(target.reshape(4, 3), np.arange(12).reshape(3, 4).T)
    for bad, why in [(np.empty((4, 3), np.float32), "shape and dtype"),
                     (np.empty((3, 4), np.float64), "shape and dtype"),
                     (np.empty((4, 3), np.float32).T, "C-contiguous"),
                     (bytes(48), "writable"),
                     ([0.0] * 12, "not list")]:
        with pytest.raises(ValueError, match=why):
            x.copy_to_host(bad)


# ---- @gpukit.vectorize ------------------------------------------------------------

@gpukit.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def relative_difference(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-30)


@gpukit.vectorize
def hypotenuse(x, y):
    return math.sqrt(x * x + y * y)


@gpukit.vectorize("int64(int64)")
def collatz_step(n):
    return n // 2 if n % 2 == 0 else 3 * n + 1


def test_vectorize_signatures_broadcast(device):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.float32([1, 2, 3])
    got = relative_difference(put(a, device), put(b, device))
    assert got.dtype == gpukit.float32 and got.shape == (2, 3) and got.device == device
    want = np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-30)
    np.testing.assert_allclose(host(got), want, rtol=1e-6)
    # int64 inputs cast safely only to the float64 signature.
    ints = put(np.arange(1, 4), device)
    assert relative_difference(ints, ints).dtype == gpukit.float64
    np.testing.assert_array_equal(host(collatz_step(put(np.arange(1, 9), device))),
                                  [4, 1, 10, 2, 16, 3, 22, 4])
    assert relative_difference.signatures == ["float32(float32, float32)",
                                              "float64(float64, float64)"]


def test_vectorize_without_signatures_and_out(device):
    x = put(np.arange(5.0), device)
    got = hypotenuse(x, put(np.float64(12.0), device))
    assert got.dtype == gpukit.float64
    np.testing.assert_allclose(host(got), np.hypot(np.arange(5.0), 12.0), rtol=1e-15)
    out = gpukit.zeros((5,), dtype=gpukit.float64, device=device)
    assert hypotenuse(x, x, out=out) is out
    np.testing.assert_allclose(host(out), np.hypot(np.arange(5.0), np.arange(5.0)), rtol=1e-15)
    # out= of another dtype takes the result cast by NumPy's same_kind rule.
    narrow = gpukit.zeros((5,), dtype=gpukit.float32, device=device)
    assert hypotenuse(x, x, out=narrow) is narrow
    np.testing.assert_allclose(host(narrow), np.hypot(np.arange(5.0), np.arange(5.0)), rtol=1e-6)
    with pytest.raises(TypeError, match="out= is int64 but the function gives float64"):
        hypotenuse(x, x, out=gpukit.zeros((5,), dtype=gpukit.int64, device=device))


@gpukit.vectorize
def plus(a, b):
    return a + b


def test_vectorize_shapes_checked(device):
    """Inputs that do not broadcast, or do not broadcast to out='s shape, are a
    ValueError (the first crashed; the second read past the inputs or filled
    out= partly); out= of a larger shape takes the inputs broadcast to it."""
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(4,\) do not broadcast"):
        plus(put(np.zeros(3), device), put(np.zeros(4), device))
    x = put(np.arange(3.0), device)
    for shape in [(5,), (2,), (3, 1), (1,)]:
        with pytest.raises(ValueError, match=r"out= has shape .* does not broadcast to"):
            plus(x, x, out=gpukit.zeros(shape, dtype=gpukit.float64, device=device))
    out = gpukit.zeros((2, 3), dtype=gpukit.float64, device=device)
    assert plus(x, x, out=out) is out
    np.testing.assert_array_equal(host(out), [[0, 2, 4], [0, 2, 4]])
    stretched = gpukit.broadcast_to(gpukit.zeros((3,), dtype=gpukit.float64, device=device),
                                    (2, 3))
    with pytest.raises(ValueError, match="broadcast"):
        plus(x, x, out=stretched)


def test_vectorize_out_overlapping_an_input(device):
    """out= sharing memory with an input as other elements gives NumPy's
    answer, as if computed into a temporary; the very same view is written in
    place."""
    values = np.arange(6.0)
    y = put(values, device)
    plus(y, y[::-1], out=y)
    np.testing.assert_array_equal(host(y), values + values[::-1])
    y = put(values, device)
    plus(y[1:], y[:-1], out=y[1:])
    want = values.copy()
    np.add(want[1:], want[:-1], out=want[1:])
    np.testing.assert_array_equal(host(y), want)
    y = put(values, device)
    assert plus(y, y, out=y) is y
    np.testing.assert_array_equal(host(y), values * 2)


@gpukit.vectorize(["float32(float32, float32)"])
def plus32(a, b):
    return a + b


@gpukit.vectorize(["int8(int8, int8)", "float32(float32, float32)",
                   "float64(float64, float64)"])
def plus_small(a, b):
    return a + b


def test_vectorize_python_scalars_are_weak(device):
    """Python bool, int and float inputs take their kind, not a size (NumPy
    2's weak scalars): 0.1 beside float64 is float64 (it was rounded through
    float32, and 1e300 became inf), beside float32 float32."""
    x64 = put(np.arange(3.0), device)
    got = plus(x64, 0.1)
    assert got.dtype == gpukit.float64
    np.testing.assert_array_equal(host(got), np.arange(3.0) + 0.1)
    np.testing.assert_array_equal(host(plus(x64, 1e300)), np.arange(3.0) + 1e300)
    x32 = put(np.arange(3, dtype=np.float32), device)
    assert plus(x32, 0.1).dtype == gpukit.float32
    assert plus(1, 2.5).dtype == gpukit.float64
    np.testing.assert_array_equal(host(plus32(x32, 2)), [2, 3, 4])
    assert plus_small(x32, 0.1).dtype == gpukit.float32
    np.testing.assert_array_equal(host(plus_small(x64, 0.1)), np.arange(3.0) + 0.1)
    i8 = put(np.arange(3, dtype=np.int8), device)
    assert plus_small(i8, 2).dtype == gpukit.int8
    # 1000 is not an int8: the next signature that holds it.
    assert plus_small(i8, 1000).dtype == gpukit.float32
    with pytest.raises(TypeError, match=r"takes \(float32, Python float\)"):
        gpukit.vectorize(["int64(int64, int64)"])(lambda a, b: a + b)(x32, 0.5)


def test_vectorize_errors():
    with pytest.raises(TypeError, match=r"no signature .* takes \(bool\)|no signature"):
        collatz_step(gpukit.asarray(np.float64([1.5])))
    with pytest.raises(TypeError, match="takes 2 inputs, got 1"):
        hypotenuse(gpukit.zeros((2,)))
    with pytest.raises(ValueError, match="not 'result\\(input, ...\\)'"):
        gpukit.vectorize(["float32 float32"])(lambda a: a)
    with pytest.raises(TypeError, match="has 2 inputs but the function takes 1"):
        gpukit.vectorize(["float32(float32, float32)"])(lambda a: a)

    def returns_nothing(a):
        a + 1
    with pytest.raises(TypeError, match="must return a number"):
        gpukit.vectorize(returns_nothing)(gpukit.zeros((2,)))
    assert pickle.loads(pickle.dumps(hypotenuse)).nin == 2


# ---- found by differential fuzzing: each construct as Python and NumPy compute it ----

@gpukit.jit
def float_divmod(a, b, quotient, remainder):
    i = gpukit.grid(1)
    if i < a.size:
        quotient[i] = a[i] // b[i]
        remainder[i] = a[i] % b[i]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_floor_division_as_numpy(device, dtype):
    """// is NumPy's npy_divmod, consistent with %: floor((a - a % b) / b)
    was off by one (10 // 3.3 gave 2), and x // inf gave NaN."""
    inf = np.inf
    a = np.array([10.0, -2.0, 256.0, 5.0, -5.0, 5.0, -5.0, 0.0, -0.0, 1.0, -1.0, 0.0, inf,
                  np.nan, 7.0, 1e30, -7.5], dtype=dtype)
    b = np.array([3.3, 0.3, -6.414837527684281, inf, inf, -inf, -inf, 3.0, 3.0, 0.0, 0.0, 0.0,
                  2.0, 1.0, np.nan, 1e-30, 2.5], dtype=dtype)
    q, r = (gpukit.zeros((a.size,), dtype=dtype, device=device) for _ in range(2))
    float_divmod.forall(a.size)(put(a, device), put(b, device), q, r)
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(a, b), np.remainder(a, b)
    np.testing.assert_array_equal(host(q), want_q)
    np.testing.assert_array_equal(host(r), want_r)
    for got, want in ((host(q), want_q), (host(r), want_r)):   # zeros' signs (NaN's are noise)
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]),
                                      np.signbit(want[~np.isnan(want)]))
    if dtype == "float64":
        np.testing.assert_array_equal(host(q)[:3], [3, -7, -40])


@gpukit.jit
def int64_edges(a, b, out):
    i = gpukit.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x // y
        out[i, 1] = x % y
        out[i, 2] = x + 1 > x
        out[i, 3] = (x * x) // 4
        out[i, 4] = x + y
        out[i, 5] = x - y
        out[i, 6] = -x
        out[i, 7] = abs(x)
        out[i, 8] = x ** 3
        out[i, 9] = x << y
        out[i, 10] = x >> y


def test_int64_wraps_as_numpy(device):
    """int64 overflow wraps as NumPy's does (it was C's undefined behaviour:
    x + 1 > x held at INT64_MAX); INT64_MIN // -1 is INT64_MIN and % -1 is 0;
    shifts by 64 or more, or by a negative count, give 0 (or -1 for a
    negative value shifted right) as NumPy's shifts do."""
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    a = np.array([small, small, big, 3037000500, -7, 5, -5, 5, -5, 1], dtype=np.int64)
    b = np.array([-1, -1, 1, 2, 3, 64, 64, -1, 70, 63], dtype=np.int64)
    out = gpukit.zeros((a.size, 11), dtype=gpukit.int64, device=device)
    int64_edges.forall(a.size)(put(a, device), put(b, device), out)
    with np.errstate(all="ignore"):
        shift = np.where((b < 0) | (b >= 64), 64, b)    # NumPy's answer for any count out of range
        want = np.stack([a // b, a % b, a + 1 > a, (a * a) // 4, a + b, a - b, -a, np.abs(a),
                         a ** 3, np.left_shift(a, b), np.right_shift(a, b)], axis=1)
    assert want[0, 0] == small and want[0, 1] == 0 and not want[2, 2]
    np.testing.assert_array_equal(np.left_shift(a, shift), want[:, 9])
    np.testing.assert_array_equal(host(out), want)


@gpukit.jit
def signed_unsigned_compare(a, b, out):
    i = gpukit.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        out[i, 0], out[i, 1], out[i, 2] = x == y, x < y, x <= y
        out[i, 3], out[i, 4], out[i, 5] = x != y, x > y, x >= y
        out[i, 6], out[i, 7], out[i, 8] = y == x, y < x, y >= x
        out[i, 9] = 0 <= x < y


def test_int64_against_uint64_compares_exactly(device):
    """int64 with uint64 compares their values, not float64 roundings of
    them (2**63 - 1 == 2**63 held); a negative int64 is below every uint64."""
    a = np.array([2**63 - 1, -1, 2**62 + 1, 5, -2**63, 7], dtype=np.int64)
    b = np.array([2**63, 2**64 - 1, 2**62, 5, 0, 2**64 - 1], dtype=np.uint64)
    out = gpukit.zeros((a.size, 10), dtype=gpukit.bool, device=device)
    signed_unsigned_compare.forall(a.size)(put(a, device), put(b, device), out)
    x, y = [int(v) for v in a], [int(v) for v in b]
    want = [[p == q, p < q, p <= q, p != q, p > q, p >= q, q == p, q < p, q >= p, 0 <= p < q]
            for p, q in zip(x, y)]
    np.testing.assert_array_equal(host(out), want)


@gpukit.jit
def rounds_integers(a, b, out):
    out[0] = math.floor(a[0])
    out[1] = math.ceil(a[0])
    out[2] = math.trunc(a[0])
    out[3] = math.floor(True)
    b[0] = math.floor(b[1])


def test_floor_ceil_trunc_of_integers_are_exact(device):
    """math.floor/ceil/trunc of an integer give it back; they went through a
    double, so 2**62 + 1 came back as 2**62."""
    a = put(np.array([2**62 + 1], dtype=np.int64), device)
    b = put(np.array([0, 2**64 - 1], dtype=np.uint64), device)
    out = gpukit.zeros((4,), dtype=gpukit.int64, device=device)
    rounds_integers[1, 1](a, b, out)
    np.testing.assert_array_equal(host(out), [2**62 + 1] * 3 + [1])
    assert host(b)[0] == 2**64 - 1


@gpukit.jit
def unfused(a, b, c, out):
    i = gpukit.grid(1)
    if i < a.size:
        out[i] = a[i] * b[i] + c[i]


def test_multiply_add_is_not_contracted(device):
    """a * b + c rounds twice, as Python and NumPy compute it: with c the
    negated rounded product the result is 0, where a fused multiply-add
    gives the product's rounding error."""
    rng = np.random.default_rng(9)
    a, b = rng.random(1000) + 1, rng.random(1000) + 1
    c = -(a * b)
    out = gpukit.zeros((1000,), dtype=gpukit.float64, device=device)
    unfused.forall(1000)(put(a, device), put(b, device), put(c, device), out)
    np.testing.assert_array_equal(host(out), a * b + c)
    assert "#pragma OPENCL FP_CONTRACT OFF" in unfused.dialect_source(out, out, out, out)


@gpukit.jit
def evaluated_once(a, counters, out):
    x = a[0]
    x = y = x + 1                                   # y is the new x, not x + 2
    a[1] = z = a[1] * 2                             # z is the value stored, not twice it
    out[0] = out[1] = gpukit.atomic.add(counters, 0, 1)
    out[2] = min(gpukit.atomic.add(counters, 1, 1), 100)
    out[3] = max(gpukit.atomic.add(counters, 2, 1), -100)
    out[4] = abs(gpukit.atomic.add(counters, 3, -1))
    out[5] = 0 <= gpukit.atomic.add(counters, 4, 1) < 100
    out[6] = -1 < gpukit.atomic.add(counters, 5, 1) < gpukit.atomic.add(counters, 6, 1) - 1
    out[gpukit.atomic.add(counters, 7, 1) + 7] += 10
    out[8] = x
    out[9] = y
    out[10] = z
    out[11] = gpukit.atomic.add(counters, 8, 1) or gpukit.atomic.add(counters, 9, 1)
    out[12] = gpukit.atomic.add(counters, 10, 1) and gpukit.atomic.add(counters, 11, 1)


def test_each_operand_evaluated_once(device):
    """Chained assignment, min, max, abs, chained comparisons, an element's
    index in +=, and and/or evaluate each operand once (atomics count the
    evaluations): their C text was repeated per use."""
    a = put(np.array([5, 3], dtype=np.int64), device)
    counters = put(np.array([0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0], dtype=np.int64), device)
    out = gpukit.zeros((13,), dtype=gpukit.int64, device=device)
    evaluated_once[1, 1](a, counters, out)
    np.testing.assert_array_equal(host(a), [5, 6])
    # `or` stops at counter 8's 4 (true), `and` at counter 10's 0 (false):
    # counters 9 and 11 are never added to.
    np.testing.assert_array_equal(host(counters), [1, 1, 1, -1, 1, 1, 1, 1, 5, 0, 1, 0])
    np.testing.assert_array_equal(host(out), [0, 0, 0, 0, 0, 1, 0, 10, 6, 6, 6, 4, 0])


@gpukit.jit
def and_or_values(a, b, out):
    i = gpukit.grid(1)
    if i < a.size:
        out[i, 0] = a[i] or 7
        out[i, 1] = a[i] and 7
        out[i, 2] = a[i] or b[i] or -1.5
        out[i, 3] = a[i] and b[i]
        out[i, 4] = 1 if a[i] or b[i] else 0


def test_and_or_give_an_operand(device):
    """`x or y` is x when x is true, else y; `x and y` is x when x is
    false, else y: an operand, as in Python (they gave bools)."""
    a = np.array([0, 3, 0, -2, 5], dtype=np.int64)
    b = np.array([0.0, 0.0, 2.5, np.nan, -0.0])
    out = gpukit.zeros((5, 5), dtype=gpukit.float64, device=device)
    and_or_values.forall(5)(put(a, device), put(b, device), out)
    want = [[x or 7, x and 7, x or y or -1.5, x and y, 1 if x or y else 0]
            for x, y in zip(a.tolist(), b.tolist())]
    np.testing.assert_array_equal(host(out), want)


@gpukit.jit
def store_16_bit(x, half, brain):
    i = gpukit.grid(1)
    if i < x.size:
        half[i] = x[i]
        brain[i] = x[i]


def test_float64_to_16_bits_rounds_once(device):
    """A float64 value stored into float16 or bfloat16 rounds once to the
    nearest: through float32 first, 1 + 2**-11 + 2**-30 became the tie
    1 + 2**-11 and rounded down to 1 (to even)."""
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -30, 1 + 2.0 ** -8 + 2.0 ** -30, -(1 + 2.0 ** -8)])
    half = gpukit.zeros((3,), dtype=gpukit.float16, device=device)
    brain = gpukit.zeros((3,), dtype=gpukit.bfloat16, device=device)
    store_16_bit.forall(3)(put(x, device), half, brain)
    np.testing.assert_array_equal(host(half), x.astype(np.float16))
    assert host(half)[0] == 1 + 2.0 ** -10
    np.testing.assert_array_equal(host(brain.astype(gpukit.float32)),
                                  [1, 1 + 2.0 ** -7, -1])


@gpukit.jit
def store_to_integers(x, u8, u16, u32, u64, i8):
    i = gpukit.grid(1)
    if i < x.shape[0]:
        u8[i] = x[i]
        u16[i] = x[i]
        u32[i] = x[i]
        u64[i] = x[i]
        i8[i] = x[i]


def test_floats_stored_into_integers_wrap_as_numpy(device):
    """A float stored into a narrower integer goes through int64 and wraps,
    as NumPy's astype: C leaves a negative float into an unsigned type
    undefined (-3.7 into uint32 gave 4294967295 on PoCL, NumPy 4294967293),
    and uint64 takes floats from 2^63 on as unsigned. Beyond int64 the
    narrower types are unspecified, as NaN and infinities are (x86 and
    NumPy give 0 there, a CUDA GPU saturates): only uint64 is compared
    at 2^63 + 4096."""
    x = np.array([-3.7, -129.0, 300.5, 2.0 ** 63 + 4096, 7.9])
    names = ("uint8", "uint16", "uint32", "uint64", "int8")
    outs = [gpukit.zeros((5,), dtype=name, device=device) for name in names]
    store_to_integers.forall(5)(put(x, device), *outs)
    within_int64 = [0, 1, 2, 4]
    with np.errstate(invalid="ignore"):
        for out, name in zip(outs, names):
            got, want = host(out).tolist(), x.astype(name).tolist()
            if name != "uint64":
                got, want = [got[i] for i in within_int64], [want[i] for i in within_int64]
            assert got == want, name


SCALE32 = np.float32(0.1)
TOP64 = np.uint64(2 ** 64 - 1)
THREE = np.int32(3)
ON = np.bool_(True)


@gpukit.jit
def numpy_scalar_constants(x, out, top):
    i = gpukit.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * SCALE32 + THREE if ON else 0.0
        top[i] = TOP64


def test_numpy_scalar_globals_are_constants(device):
    """NumPy scalars as global constants (they were a TypeError about a
    Python object): their value, float32 staying float32 (x * 0.1 in
    float32, as NumPy's) and uint64 whole."""
    x = np.arange(4, dtype=np.float32)
    out = gpukit.zeros((4,), dtype="float32", device=device)
    top = gpukit.zeros((4,), dtype="uint64", device=device)
    numpy_scalar_constants.forall(4)(put(x, device), out, top)
    np.testing.assert_array_equal(host(out), x * SCALE32 + np.float32(THREE))
    assert host(top).tolist() == [2 ** 64 - 1] * 4


def make_scaler(k):
    @gpukit.jit(device=True)
    def scaled(x):
        return x * k
    return scaled


def calls_two_closures(out):
    out[0] = first_scaler(2.0)
    out[1] = second_scaler(2.0)


first_scaler, second_scaler = make_scaler(3.0), make_scaler(5.0)


def test_device_functions_made_by_a_factory(device):
    """Device functions that close over a factory's argument each see their
    own (code.co_freevars was read through a freed tuple)."""
    out = gpukit.zeros((2,), dtype=gpukit.float64, device=device)
    gpukit.jit(calls_two_closures)[1, 1](out)
    np.testing.assert_array_equal(host(out), [6.0, 10.0])


@gpukit.jit
def smallest_literal(out):
    out[0] = -9223372036854775808
    out[1] = -9223372036854775808 // -1


def test_int64_min_literal(device):
    out = gpukit.zeros((2,), dtype=gpukit.int64, device=device)
    smallest_literal[1, 1](out)
    np.testing.assert_array_equal(host(out), [np.iinfo(np.int64).min] * 2)


@gpukit.jit
def names_like_generated_ones(x, n):
    x_view = x[0]          # beside argument x (its gk_view was v_x_view)
    n_arg = n + 1          # beside argument n (it arrived as v_n_arg)
    x[1] = x_view + n_arg


def test_locals_named_like_generated_names(device):
    x = put(np.array([2.0, 0.0]), device)
    names_like_generated_ones[1, 1](x, 3)
    np.testing.assert_array_equal(host(x), [2.0, 6.0])


@gpukit.jit(device=True)
def sign_or_nothing(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1


@gpukit.jit(device=True)
def sign_everywhere(x):
    while True:
        if x > 0:
            return 1
        if x < 0:
            return -1
        return 0


def calls_sign(out):
    out[0] = sign_or_nothing(out[1])


@gpukit.jit
def calls_total_sign(out):
    out[0] = sign_everywhere(out[1])


def test_device_function_that_can_fall_off_its_end(device):
    """Python returns None where a device function reaches its end; no
    number holds that (C returned garbage), so it is refused."""
    with pytest.raises(TypeError, match="must return one on every path") as caught:
        gpukit.jit(calls_sign)[1, 1](gpukit.zeros((2,), device=device))
    assert "sign_or_nothing" in str(caught.value)
    out = put(np.array([0.0, -4.0]), device)
    calls_total_sign[1, 1](out)
    assert host(out)[0] == -1


@gpukit.jit(device=True)
def halve_in_place(x):
    x = x / 2
    return x


@gpukit.jit
def halves_a_widened_variable(out):
    v = 0
    out[0] = halve_in_place(v)
    v = 1.5
    out[1] = halve_in_place(v)


@gpukit.jit
def halves_an_int(out):
    v = 0
    out[0] = halve_in_place(v)


def test_device_call_in_a_pass_before_widening(device):
    """A device call translated while a variable still has its first,
    narrower type (v is int before `v = 1.5` widens it) fails only if the
    last pass fails too: here the function gets float64 and works (it was a
    TypeError), and nothing of the failed translation is left in the text;
    called with an int for good, its argument's change of type is refused."""
    out = gpukit.zeros((2,), dtype=gpukit.float64, device=device)
    halves_a_widened_variable[1, 1](out)
    np.testing.assert_array_equal(host(out), [0.0, 0.75])
    text = halves_a_widened_variable.dialect_source(out)
    assert text.count("GK_DEVICE_FN double gkjit_device_1(double a_x)") == 1
    assert "gkjit_device_2" not in text
    with pytest.raises(TypeError, match="an argument changes type in the body") as caught:
        halves_an_int[1, 1](out)
    assert "halve_in_place" in str(caught.value)


@gpukit.jit
def wrap(x):
    i = gpukit.grid(1)
    if i < x.size:
        x[i] = x[i] + 1


@gpukit.jit
def device_1(x):
    x[0] = x[0] * 2


@gpukit.vectorize
def abs_i64(a, b):
    return a - b


def test_kernels_named_like_prelude_helpers(device):
    """Kernels are gkjitk_<name>: as gkjit_<name>, a kernel named wrap
    redefined the prelude's gkjit_wrap, device_1 the first device
    function and a vectorized abs_i64 gkjit_abs_i64 (a raw build error)."""
    x = put(np.array([1.0, 2.0]), device)
    wrap.forall(2)(x)
    device_1[1, 1](x)
    np.testing.assert_array_equal(host(x), [4.0, 3.0])
    assert "GK_KERNEL void gkjitk_wrap(" in wrap.dialect_source(x)
    np.testing.assert_array_equal(host(abs_i64(x, x)), [0.0, 0.0])
