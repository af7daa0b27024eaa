"""FFTs of CUDA arrays through cuFFT, against the fake CUDA driver and a
fake cuFFT (tests/fake_cuda/fake_cufft.c: the plain DFT sum over the fake
driver's device memory, which is host memory, after waiting for its
stream). The fake driver runs no kernels, so these cases are ones where
cuFFT is the whole of the work: contiguous rows along the last axis, no
padding, no scaling (norm "backward" forward, "forward" backward). A
cuFFT that is missing or lacks a function sends the transform to the host
(FFTW) with the same results. Every call is checked on a real GPU by the
package suite on cuda:0 (GPUKIT_TEST_DEVICES)."""
import pytest

from conftest import BUILD, FAKE_CUDA

FAKE_CUFFT = BUILD / "tests" / "fake_cufft" / "libcufft.so.12"
BROKEN_CUFFT = BUILD / "tests" / "fake_cufft_broken" / "libcufft.so.12"

CASES = """
import ctypes, os
import numpy as np
import gpukit
cufft = os.environ["GPUKIT_CUFFT_LIBRARY"]
execs = (ctypes.CDLL(cufft).fake_cufft_execs if os.path.exists(cufft) else lambda: 0)
rng = np.random.default_rng(5)
z = rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))
r = rng.standard_normal((2, 9))
cases = [
    (lambda a: gpukit.fft.fft(a), lambda x: np.fft.fft(x), z),
    (lambda a: gpukit.fft.ifft(a, norm="forward"), lambda x: np.fft.ifft(x, norm="forward"), z),
    (lambda a: gpukit.fft.fft(a), lambda x: np.fft.fft(x).astype(np.complex64),
     z.astype(np.complex64)),
    (lambda a: gpukit.fft.rfft(a), lambda x: np.fft.rfft(x), r),
    (lambda a: gpukit.fft.rfft(a), lambda x: np.fft.rfft(x).astype(np.complex64),
     r.astype(np.float32)),
    (lambda a: gpukit.fft.irfft(a, n=9, norm="forward"),
     lambda x: np.fft.irfft(x, n=9, norm="forward"), np.fft.rfft(r, norm="forward")),
]
for ours, theirs, x in cases:
    a = gpukit.asarray(x, device="cuda:0")
    got = ours(a)
    assert got.device == "cuda:0"
    want = theirs(x)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    tolerance = 1e-4 if want.dtype in (np.complex64, np.float32) else 1e-10
    np.testing.assert_allclose(np.asarray(got), want, rtol=tolerance, atol=tolerance)
    np.testing.assert_array_equal(np.asarray(a), x)  # the input is left alone
print("execs", execs())
"""


def run(py, cufft):
    out = py(CASES, GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUFFT_LIBRARY=cufft).stdout
    return int(out.split("execs")[1])


def test_cuda_ffts_run_on_cufft(py):
    assert run(py, FAKE_CUFFT) == 6  # each case one cuFFT transform


@pytest.mark.parametrize("library", ["missing", "broken"])
def test_without_cufft_the_host_computes(py, tmp_path, library):
    cufft = tmp_path / "libcufft.so.12" if library == "missing" else BROKEN_CUFFT
    assert run(py, cufft) == 0
