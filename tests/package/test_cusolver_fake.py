"""Factorizations of CUDA arrays through cuSOLVER, against the fake CUDA
driver and a fake cuSOLVER (tests/fake_cuda/fake_cusolver.c: the host's
LAPACKE on the fake driver's device memory, which is host memory, after
waiting for the handle's stream). The fake driver runs no kernels, so the
cases are ones where cuSOLVER and the driver's copies are the whole of the
work: solve of a vector, eigvalsh and eigh of real stacks, and the errors
(a singular matrix, one not positive definite) read from the infos on the
device. inv (whose identities a kernel makes), det, slogdet and svd (whose
input a kernel checks for NaN first) and qr (whose factors kernels read
out) need a real GPU. A cuSOLVER that is missing or lacks a function sends
the work to the host (LAPACK) with the same results. Every call is checked
on a real GPU by the package suite on cuda:0 (GPUKIT_TEST_DEVICES)."""
import pytest

from conftest import BUILD, FAKE_CUDA

FAKE_CUSOLVER = BUILD / "tests" / "fake_cusolver" / "libcusolver.so.12"
BROKEN_CUSOLVER = BUILD / "tests" / "fake_cusolver_broken" / "libcusolver.so.12"

CASES = """
import ctypes, os
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
s = rng.standard_normal((3, 5, 5))
s = s + np.swapaxes(s, -1, -2)
np.testing.assert_allclose(np.asarray(linalg.eigvalsh(on(s))), np.linalg.eigvalsh(s), atol=1e-12)
w, v = linalg.eigh(on(s))
vectors = fetch(v)
np.testing.assert_allclose(s @ vectors, vectors * np.asarray(w)[..., None, :], atol=1e-10)
for call, why in [(lambda: linalg.solve(on([[1.0, 2.0], [2.0, 4.0]]), on([1.0, 1.0])),
                   "singular"),
                  (lambda: linalg.cholesky(on(np.stack([np.eye(2), -np.eye(2)]))),
                   r"not positive definite \\(matrix \\[1\\] of the stack\\)")]:
    try:
        call()
    except linalg.LinAlgError as e:
        import re
        assert re.search(why, str(e)), str(e)
    else:
        raise AssertionError("no LinAlgError")
print("calls", calls())
"""


def run(py, solver):
    out = py(CASES, GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUSOLVER_LIBRARY=solver).stdout
    return int(out.split("calls")[1])


def test_cuda_factorizations_run_on_cusolver(py):
    # solve: getrf, getrs; eigvalsh and eigh: 3 syevd each; the errors:
    # getrf, and potrf of both matrices
    assert run(py, FAKE_CUSOLVER) == 2 + 3 + 3 + 1 + 2


@pytest.mark.parametrize("library", ["missing", "broken"])
def test_without_cusolver_the_host_computes(py, tmp_path, library):
    solver = tmp_path / "libcusolver.so.12" if library == "missing" else BROKEN_CUSOLVER
    assert run(py, solver) == 0
