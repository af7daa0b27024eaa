"""Factorizations of CUDA arrays through cuSOLVER, against the fake CUDA
driver and a fake cuSOLVER (tests/fake_cuda/fake_cusolver.c: the host's
LAPACKE on the fake driver's device memory, which is host memory, after
waiting for the handle's stream). The fake driver runs no kernels, so the
cases are ones where cuSOLVER and the driver's copies are the whole of the
work: solve of a vector, inv, eigvalsh and eigh of real stacks, det and
slogdet (the LU's factors read back), svd of wide and square matrices
(cuSOLVER's gesvd takes only m >= n, which a wide C-order matrix is in
column-major order; a tall one is first transposed by a kernel, so only
a real GPU checks it), and the errors (a singular matrix, one not positive definite) read from the infos
on the device. A cuSOLVER that is missing or lacks a function sends the
work to the host (LAPACK) with the same results. Every call is checked on
a real GPU by the package suite on cuda:0 (GPUKIT_TEST_DEVICES)."""
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
np.testing.assert_allclose(np.asarray(linalg.inv(on(a))), np.linalg.inv(a), rtol=1e-12)
s = rng.standard_normal((3, 5, 5))
s = s + np.swapaxes(s, -1, -2)
np.testing.assert_allclose(np.asarray(linalg.eigvalsh(on(s))), np.linalg.eigvalsh(s), atol=1e-12)
w, v = linalg.eigh(on(s))
vectors = fetch(v)
np.testing.assert_allclose(s @ vectors, vectors * np.asarray(w)[..., None, :], atol=1e-10)
stack = rng.standard_normal((2, 4, 4))
np.testing.assert_allclose(np.asarray(linalg.det(on(stack))), np.linalg.det(stack), rtol=1e-12)
sign, logabs = linalg.slogdet(on(stack))
ref_sign, ref_log = np.linalg.slogdet(stack)
np.testing.assert_array_equal(np.asarray(sign), ref_sign)
np.testing.assert_allclose(np.asarray(logabs), ref_log, rtol=1e-12)
assert np.asarray(linalg.det(on([[1.0, 2.0], [2.0, 4.0]]))).item() == 0.0  # singular: 0
for shape in [(3, 5), (4, 4)]:  # wide and square: gesvd's shape as they lie
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(np.asarray(linalg.svdvals(on(x))), np.linalg.svdvals(x),
                               rtol=1e-12)
    for full in (False, True):
        u, sv, vh = linalg.svd(on(x), full_matrices=full)
        U, S, Vh = fetch(u), np.asarray(sv), fetch(vh)
        ref = np.linalg.svd(x, full_matrices=full)
        assert U.shape == ref.U.shape and Vh.shape == ref.Vh.shape
        k = min(shape)
        np.testing.assert_allclose((U[:, :k] * S) @ Vh[:k], x, atol=1e-12)
        np.testing.assert_allclose(U.T @ U, np.eye(U.shape[1]), atol=1e-12)
try:
    linalg.svd(on([[1.0, np.nan], [0.0, 1.0]]))
except linalg.LinAlgError as e:
    assert "NaN or infinity" in str(e), str(e)
else:
    raise AssertionError("no LinAlgError for NaN")
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
    # solve: getrf, getrs; inv: getrf, getrs; eigvalsh and eigh: 3 syevd
    # each; det and slogdet of 2 matrices and det of 1: getrf each; svd: 2
    # shapes x (svdvals, reduced, full), and the NaN one; the errors: getrf,
    # and potrf of both matrices
    assert run(py, FAKE_CUSOLVER) == 2 + 2 + 3 + 3 + 2 + 2 + 1 + 2 * 3 + 1 + 1 + 2


@pytest.mark.parametrize("library", ["missing", "broken"])
def test_without_cusolver_the_host_computes(py, tmp_path, library):
    solver = tmp_path / "libcusolver.so.12" if library == "missing" else BROKEN_CUSOLVER
    assert run(py, solver) == 0
