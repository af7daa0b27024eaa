"""What `import gpukit` costs: the module maps no BLAS or LAPACK until a
matrix product or factorization needs one (libgpukit loads them on first
use, src/ext/blas.c), so importing it starts no OpenBLAS thread pool; nor
OpenMP's runtime until a loop is big enough for threads (src/ext/openmp.c);
and a machine without BLAS gets an error naming the package to install.
Also the default device that GPUKIT_DEFAULT_DEVICE sets at import."""
import json
import re

import pytest

import gpukit
from conftest import DEVICES, child_env, run_python

# Every file name a CBLAS or LAPACKE (and the LAPACK under it) has, and
# OpenMP's runtime.
BLAS_NAMES = ("libopenblas", "liblapack", "libcblas", "libblas.so", "libgomp")

MAPPED = """
    import json, gpukit
    def mapped():
        maps = open("/proc/self/maps").read()
        return sorted({name for name in %r if name in maps})
    steps = {"import": mapped()}
    a = gpukit.ones((3, 3), dtype="float64", device="cpu")
    b = (a + a) * 2
    gpukit.devices()
    steps["arrays"] = mapped()
    c = a @ b
    steps["matmul"] = mapped()
    gpukit.linalg.svd(c + gpukit.eye(3, dtype="float64", device="cpu"))
    steps["svd"] = mapped()
    gpukit.ones(1 << 20, dtype="float32", device="cpu").sum()  # big enough for threads
    steps["big sum"] = mapped()
    print(json.dumps(steps))
""" % (BLAS_NAMES,)


def test_import_maps_no_blas_until_a_matmul(py):
    steps = json.loads(py(MAPPED, OMP_NUM_THREADS="2").stdout)
    assert steps["import"] == [] and steps["arrays"] == []
    assert "libopenblas" in steps["matmul"]  # the check can see a load
    assert "liblapack" in steps["svd"]
    assert "libgomp" in steps["big sum"]


THREADED = """
    import gpukit
    gpukit.ones(%d, dtype="float32", device="cpu").sum()
    print("libgomp" in open("/proc/self/maps").read())
"""


@pytest.mark.parametrize("setting, elements, threaded", [
    ("", (1 << 20) - 1, False),  # unset: threads from 2^20 elements
    ("", 1 << 20, True),
    ("4096", 4095, False),  # the user's own threshold
    ("4096", 4096, True),
    ("lots", 1 << 19, False),  # not a positive integer: the default
    ("-1", 1 << 19, False),
    ("0", 1 << 19, False),
])
def test_loops_use_threads_from_a_size_the_user_may_set(py, setting, elements, threaded):
    # Waking threads costs more than a loop under 2^20 elements saves
    # (src/compute/backends/cpu/parallel.h); OpenMP's runtime is loaded for
    # the first loop on threads, so its presence shows whether one ran.
    out = py(THREADED % elements, OMP_NUM_THREADS="2", GPUKIT_CPU_PARALLEL_MIN=setting).stdout
    assert out.split() == [str(threaded)], (setting, elements, out)


def test_missing_blas_is_an_error_naming_the_package(py, tmp_path):
    code = """
        import gpukit
        a = gpukit.ones((2, 2), dtype="float32", device="cpu")
        for name, op in (("matmul", lambda: a @ a), ("svd", lambda: gpukit.linalg.svd(a)),
                         ("inv", lambda: gpukit.linalg.inv(a))):
            try:
                op()
                print(name, "worked")
            except gpukit.GPUError as e:
                print(name, e)
        print("add", (a + a).tolist())
    """
    missing = str(tmp_path / "nonexistent" / "libblas.so")
    out = py(code, GPUKIT_BLAS_LIBRARY=missing, GPUKIT_LAPACKE_LIBRARY=missing).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert lines["matmul"].startswith("matmul on the CPU: no usable CBLAS at GPUKIT_BLAS_LIBRARY=")
    assert missing in lines["matmul"] and "apt install libopenblas0" in lines["matmul"]
    assert lines["svd"].startswith("svd: no usable LAPACKE at GPUKIT_LAPACKE_LIBRARY=")
    assert "apt install liblapacke" in lines["svd"]
    assert lines["inv"].startswith("inv: no usable LAPACKE")
    assert lines["add"] == "[[2.0, 2.0], [2.0, 2.0]]"  # the rest still works


def test_a_library_without_cblas_is_refused(py):
    code = """
        import gpukit
        a = gpukit.ones((2, 2), dtype="float64", device="cpu")
        try:
            a @ a
        except gpukit.GPUError as e:
            print(e)
    """
    out = py(code, GPUKIT_BLAS_LIBRARY="libm.so.6").stdout
    assert "libm.so.6 has no cblas_sgemm" in out


def test_without_openmp_the_cpu_computes_on_one_thread(py, tmp_path):
    code = """
        import gpukit, numpy as np
        a = np.arange(1 << 20, dtype=np.float64).reshape(1024, 1024) % 7
        x = gpukit.asarray(a, device="cpu")
        print(float(x.sum()) == float(a.sum()),
              np.array_equal(np.asarray((x + x).cpu()), a + a),
              np.array_equal(np.asarray(x.sum(axis=0).cpu()), a.sum(axis=0)))
        print(gpukit.device("cpu").describe())
        print("libgomp" in open("/proc/self/maps").read())
    """
    missing = str(tmp_path / "no-such-dir" / "libgomp.so.1")
    out = py(code, OMP_NUM_THREADS="2", GPUKIT_OPENMP_LIBRARY=missing).stdout.splitlines()
    assert out[0] == "True True True"
    # The description says why there is one thread and what to install.
    assert "1 thread (no OpenMP runtime: " + missing in out[1], out[1]
    assert "apt install libgomp1" in out[1]
    assert out[2] == "False"


@pytest.mark.parametrize("first", ["(gpukit.ones(1 << 20, device='cpu') + 1).tolist()",
                                   "gpukit.fft.fft(gpukit.ones(64, device='cpu')).tolist()"])
def test_openmp_threads_spin_briefly_unless_the_user_chose(tmp_path, first):
    # libgomp's own default, 300000 spins after each loop, kept the cores
    # from OpenBLAS's threads and other programs; gpukit asks for 1000 when
    # the user chose nothing, as libgomp's own display shows, and leaves
    # the environment as it found it; whichever loads libgomp first, a
    # parallel loop or FFTW's OpenMP build
    code = f"""
        import ctypes, gpukit
        {first}
        libc = ctypes.CDLL(None)
        libc.getenv.restype = ctypes.c_char_p
        print(libc.getenv(b"GOMP_SPINCOUNT"))
    """

    def spin(**chosen):
        env = child_env(tmp_path)
        env.pop("OMP_WAIT_POLICY", None)  # ctest's, for the other tests
        env.pop("GOMP_SPINCOUNT", None)
        env.update(OMP_DISPLAY_ENV="verbose", OMP_NUM_THREADS="2", **chosen)
        result = run_python(code, env)
        return re.search(r"GOMP_SPINCOUNT = '(\d+)'", result.stderr).group(1), result.stdout.strip()

    assert spin() == ("1000", "None")
    assert spin(GOMP_SPINCOUNT="5000") == ("5000", "b'5000'")
    assert spin(OMP_WAIT_POLICY="active")[0] != "1000"


def test_openblas_threads_spin_briefly_unless_the_user_chose(tmp_path):
    # OpenBLAS's own default, 2^28 cycles after each call, burnt a core for
    # about 0.1 s after every matmul; gpukit asks for 2^20 when the user
    # chose nothing, as OpenBLAS's own getter shows, and leaves the
    # environment as it found it
    code = """
        import ctypes, gpukit
        a = gpukit.ones((64, 64), device="cpu")
        (a @ a).tolist()  # loads CBLAS: OpenBLAS
        libc = ctypes.CDLL(None)
        libc.getenv.restype = ctypes.c_char_p
        print(ctypes.CDLL("libopenblas.so.0").openblas_thread_timeout(),
              libc.getenv(b"OPENBLAS_THREAD_TIMEOUT"))
    """

    def timeout(**chosen):
        env = child_env(tmp_path)
        for name in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT", "GPUKIT_BLAS_LIBRARY"):
            env.pop(name, None)
        env.update(chosen)
        return run_python(code, env).stdout.split()

    assert timeout() == ["20", "None"]
    assert timeout(OPENBLAS_THREAD_TIMEOUT="25") == ["25", "b'25'"]
    # the older name, which OpenBLAS reads elsewhere: gpukit sets nothing
    assert timeout(GOTO_THREAD_TIMEOUT="26") == ["0", "None"]


SLEEF_MAPPED = """
    import gpukit
    def mapped():
        return "libsleef" in open("/proc/self/maps").read()
    steps = [mapped()]
    a = gpukit.ones((3,), dtype="float32", device="cpu")
    (a + a).tolist()
    steps.append(mapped())
    gpukit.exp(a).tolist()
    steps.append(mapped())
    print(steps)
"""


def test_sleef_is_loaded_on_the_first_math_function(py):
    """SLEEF (src/ext/sleef.c) is mapped by exp, not by import or arithmetic."""
    assert py(SLEEF_MAPPED).stdout.strip() == "[False, False, True]"


DEFAULT_DEVICE = """
    import gpukit
    default = gpukit.default_device()
    x = gpukit.asarray([1.0])
    with gpukit.device("cpu"):
        inner = gpukit.zeros(1).device
    gpukit.set_default_device(None)
    print(default, x.device, inner, gpukit.ones(1).device)
"""


@pytest.mark.parametrize("device", DEVICES)
def test_default_device_from_the_environment(py, device):
    # From the import on, as set_default_device() would make it: blocks
    # still override it, and set_default_device(None) gives the CPU back.
    out = py(DEFAULT_DEVICE, GPUKIT_DEFAULT_DEVICE=device).stdout.split()
    assert out == [str(gpukit.device(device)), str(gpukit.device(device)), "cpu", "cpu"]


def test_default_device_unset_or_empty_is_the_cpu(py):
    assert py(DEFAULT_DEVICE, GPUKIT_DEFAULT_DEVICE="").stdout.split() == ["cpu"] * 4


def test_a_bad_default_device_fails_the_import(py):
    result = py("import gpukit", check=False, GPUKIT_DEFAULT_DEVICE="gpu:7")
    assert result.returncode != 0
    assert "ValueError: GPUKIT_DEFAULT_DEVICE=\"gpu:7\"" in result.stderr
    assert "'gpu:7' is not a device name" in result.stderr
