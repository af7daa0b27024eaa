"""Factorizations of CUDA arrays through cuSOLVER and cuBLAS, against the
fake CUDA driver, a fake cuSOLVER and a fake cuBLAS
(tests/fake_cuda/fake_cusolver.c, fake_cublas.c: the host's LAPACKE on
the fake driver's device memory, which is host memory, after the handle's
stream is done). The fake driver runs no kernels, so the cases are ones
where the libraries and the driver's copies are the whole of the work:
solve of a vector and of a stack, inv of a stack of small matrices,
eigvalsh and eigh of real stacks, and the errors (a singular matrix, one
not positive definite) read from the infos on the device. inv of one
matrix or of large ones (whose identities a kernel makes), det, slogdet
and svd (whose input a kernel checks for NaN first) and qr (whose factors
kernels read out) need a real GPU.

Stacks of small matrices go to the batched routines in one call (cuBLAS's
getrfBatched, getrsBatched and getriBatched, cuSOLVER's syevjBatched and
potrfBatched), larger ones to one call per matrix; either way the host
waits for the device once per factorization, to read all the infos,
never once per matrix. A cuSOLVER that is missing or lacks a function
sends the work to the host (LAPACK) with the same results. Every call is
checked on a real GPU by the package suite on cuda:0
(GPUKIT_TEST_DEVICES)."""
import pytest

from conftest import BUILD, FAKE_CUDA

FAKE_CUSOLVER = BUILD / "tests" / "fake_cusolver" / "libcusolver.so.12"
BROKEN_CUSOLVER = BUILD / "tests" / "fake_cusolver_broken" / "libcusolver.so.12"
FAKE_CUBLAS = BUILD / "tests" / "fake_cublas" / "libcublas.so.13"

CASES = """
import ctypes, os, re
import numpy as np
import gpukit
from gpukit import linalg
solver = os.environ["GPUKIT_CUSOLVER_LIBRARY"]
calls = ctypes.CDLL(solver).fake_cusolver_calls if os.path.exists(solver) else lambda: 0
rng = np.random.default_rng(6)
a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
b = rng.standard_normal(4)
on = lambda x: gpukit.asarray(x, device="cuda:0")


def fetch(x):
    # x on the host: the fake driver runs no kernels, so a transposed view
    # (as eigh and svd may return) is read through its contiguous .mT
    if x.__cuda_array_interface__["strides"] is None:
        return np.asarray(x)
    return np.swapaxes(np.asarray(x.mT), -1, -2)

x = linalg.solve(on(a), on(b))
assert x.device == "cuda:0" and x.shape == (4,)
np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-12)
# a stack of 3 small symmetric matrices (batched) and 2 of 40 x 40 (each)
for n, count in [(5, 3), (40, 2)]:
    s = rng.standard_normal((count, n, n))
    s = s + np.swapaxes(s, -1, -2)
    np.testing.assert_allclose(np.asarray(linalg.eigvalsh(on(s))), np.linalg.eigvalsh(s),
                               atol=1e-10)
    w, v = linalg.eigh(on(s))
    vectors = fetch(v)
    np.testing.assert_allclose(s @ vectors, vectors * np.asarray(w)[..., None, :], atol=1e-9)
for call, why in [(lambda: linalg.solve(on([[1.0, 2.0], [2.0, 4.0]]), on([1.0, 1.0])),
                   "singular"),
                  (lambda: linalg.cholesky(on(np.stack([np.eye(2), -np.eye(2)]))),
                   r"not positive definite \\(matrix \\[1\\] of the stack\\)"),
                  # batched (cuBLAS): getrfBatched's infos read after getriBatched
                  (lambda: linalg.inv(on(np.stack([np.eye(2), np.ones((2, 2))]))),
                   r"singular \\(matrix \\[1\\] of the stack\\)")]:
    try:
        call()
    except linalg.LinAlgError as e:
        assert re.search(why, str(e)), str(e)
    else:
        raise AssertionError("no LinAlgError")
print("calls", calls())
"""


def run(py, solver):
    out = py(CASES, GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUSOLVER_LIBRARY=solver,
             GPUKIT_CUBLAS_LIBRARY=FAKE_CUBLAS).stdout
    return int(out.split("calls")[1])


def test_cuda_factorizations_run_on_cusolver(py):
    # solve: getrf, getrs; eigvalsh and eigh: one syevjBatched each for the
    # small stack, two syevd each for the large one; the errors: getrf and
    # getrs (queued before getrf's infos are read, so that the host waits
    # once), and potrfBatched of both matrices; the singular stack's inv
    # runs on cuBLAS's batched routines, which this count leaves out
    assert run(py, FAKE_CUSOLVER) == 2 + 2 + 4 + 2 + 1


@pytest.mark.parametrize("library", ["missing", "broken"])
def test_without_cusolver_the_host_computes(py, tmp_path, library):
    solver = tmp_path / "libcusolver.so.12" if library == "missing" else BROKEN_CUSOLVER
    assert run(py, solver) == 0


def test_stacks_wait_for_the_device_once(py):
    # A stack of 50 matrices: the batched routines where they apply (n <=
    # 32), one call per matrix beyond; the infos of all of them come back
    # in one copy, so each factorization waits for the device once.
    out = py("""
import ctypes, os
import numpy as np
import gpukit
from gpukit import linalg
driver = ctypes.CDLL(os.environ["GPUKIT_CUDA_LIBRARY"])
solver = ctypes.CDLL(os.environ["GPUKIT_CUSOLVER_LIBRARY"]).fake_cusolver_calls
blas = ctypes.CDLL(os.environ["GPUKIT_CUBLAS_LIBRARY"]).fake_cublas_calls
rng = np.random.default_rng(3)
for n in (6, 40):
    a = rng.standard_normal((50, n, n)) + n * np.eye(n)
    s = a @ np.swapaxes(a, -1, -2)
    b = rng.standard_normal((50, n, 1))
    ga, gs, gb = (gpukit.asarray(x, device="cuda:0") for x in (a, s, b))
    gpukit.synchronize("cuda:0")
    ops = [("solve", lambda: linalg.solve(ga, gb)),
           ("eigvalsh", lambda: linalg.eigvalsh(gs)),
           ("cholesky", lambda: linalg.cholesky(gs))]
    if n <= 32:  # beyond, inv solves against identities, which a kernel makes
        ops.append(("inv", lambda: linalg.inv(ga)))
    for name, run in ops:
        waits, routines = driver.fake_cuda_host_waits(), solver() + blas()
        got = run()
        print(n, name, driver.fake_cuda_host_waits() - waits, solver() + blas() - routines)
        if name == "solve":
            np.testing.assert_allclose(np.asarray(got), np.linalg.solve(a, b), rtol=1e-10)
        if name == "eigvalsh":
            np.testing.assert_allclose(np.asarray(got), np.linalg.eigvalsh(s), rtol=1e-10)
        if name == "inv":
            np.testing.assert_allclose(np.asarray(got), np.linalg.inv(a), rtol=1e-10)
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUSOLVER_LIBRARY=FAKE_CUSOLVER,
             GPUKIT_CUBLAS_LIBRARY=FAKE_CUBLAS).stdout
    seen = {(int(n), name): (int(waits), int(routines))
            for n, name, waits, routines in (line.split() for line in out.splitlines())}
    # small: getrfBatched + getrsBatched, syevjBatched, potrfBatched, and
    # getrfBatched + getriBatched (the inverses from the LU, out of place)
    assert seen[6, "solve"] == (1, 2)
    assert seen[6, "inv"] == (1, 2)
    assert seen[6, "eigvalsh"] == (1, 1)
    assert seen[6, "cholesky"] == (1, 1)
    # large: a getrf and a getrs, a syevd, a potrf per matrix
    assert seen[40, "solve"] == (1, 100)
    assert seen[40, "eigvalsh"] == (1, 50)
    assert seen[40, "cholesky"] == (1, 50)


def test_without_pinned_memory_the_copies_are_synchronous(py):
    # Where no pinned memory can be had (a low locked-memory limit), every
    # upload, the batched routines' tables of addresses included, and every
    # download is a synchronous copy from pageable memory: the same results.
    py("""
import numpy as np
import gpukit
from gpukit import linalg
rng = np.random.default_rng(4)
a = rng.standard_normal((50, 6, 6)) + 6 * np.eye(6)
b = rng.standard_normal((50, 6, 1))  # one column: no transposing kernel
big = rng.standard_normal(3 << 20)  # 24 MiB: more than the staging buffers hold
ga, gb = gpukit.asarray(a, device="cuda:0"), gpukit.asarray(b, device="cuda:0")
np.testing.assert_allclose(np.asarray(linalg.solve(ga, gb)), np.linalg.solve(a, b), rtol=1e-10)
np.testing.assert_allclose(np.asarray(linalg.inv(ga)), np.linalg.inv(a), rtol=1e-10)
assert np.array_equal(np.asarray(gpukit.asarray(big, device="cuda:0")), big)
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUSOLVER_LIBRARY=FAKE_CUSOLVER,
       GPUKIT_CUBLAS_LIBRARY=FAKE_CUBLAS, FAKE_CUDA_NO_PINNED="1")


def test_inv_without_a_cublas_handle_solves_against_identities(py):
    # cuBLAS is there but cannot start on the device: inv of a stack then
    # goes to cuSOLVER, a getrf and a getrs against the identity per matrix
    # (the identities come from a kernel, which the fake driver does not
    # run, so only the calls are checked), and a singular matrix is named.
    out = py("""
import ctypes, os
import numpy as np
import gpukit
from gpukit import linalg
solver = ctypes.CDLL(os.environ["GPUKIT_CUSOLVER_LIBRARY"]).fake_cusolver_calls
a = np.random.default_rng(5).standard_normal((5, 4, 4)) + 4 * np.eye(4)
got = linalg.inv(gpukit.asarray(a, device="cuda:0"))
assert got.shape == (5, 4, 4) and got.device == "cuda:0"
print("calls", solver())
try:
    linalg.inv(gpukit.asarray(np.stack([np.eye(2), np.ones((2, 2))]), device="cuda:0"))
except linalg.LinAlgError as e:
    print(e)
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUSOLVER_LIBRARY=FAKE_CUSOLVER,
             GPUKIT_CUBLAS_LIBRARY=FAKE_CUBLAS, FAKE_CREATE_FAILS="cublasCreate_v2").stdout
    assert "calls 10\n" in out
    assert "singular (matrix [1] of the stack)" in out


def test_an_overflowed_workspace_size_is_refused(py):
    # cuSOLVER's 32-bit API gives workspace sizes as an int, which big
    # enough matrices overflow (syevd's is about 2 n^2): refused with what
    # to do, not run in a workspace too small.
    # A batched eigh (syevjBatched) goes one matrix at a time instead,
    # where the size is refused too here. (The Jacobi svd's check is not
    # reached on the fake: svd's finiteness check is a kernel.)
    out = py("""
import numpy as np
import gpukit
from gpukit import linalg
for shape in [(3, 3), (4, 3, 3)]:
    try:
        linalg.eigh(gpukit.asarray(np.broadcast_to(np.eye(3), shape).copy(), device="cuda:0"))
    except ValueError as e:
        print(e)
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUSOLVER_LIBRARY=FAKE_CUSOLVER,
             GPUKIT_CUBLAS_LIBRARY=FAKE_CUBLAS, FAKE_CUSOLVER_LWORK="-2").stdout
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert "32-bit workspace size overflows for 3 x 3 matrices (1 at once)" in lines[0], out
    assert "32-bit workspace size overflows for 3 x 3 matrices (4 at once)" in lines[1], out
    assert all('x.to_device("cpu")' in line for line in lines)
