"""Matrix products of CUDA arrays through cuBLAS, against the fake CUDA
driver and a fake cuBLAS (tests/fake_cuda/fake_cublas.c: the host's CBLAS
on the fake driver's device memory, which is host memory, after waiting
for the handle's stream). The fake driver runs no kernels, so right
products prove cuBLAS did them: sgemm, dgemm, cgemm and zgemm, single and
strided-batched (a broadcast operand: stride 0), and GemmEx for float16
and bfloat16 (summed in float32, rounded once). Every call is checked on
a real GPU by the package suite on cuda:0 (GPUKIT_TEST_DEVICES)."""
from conftest import BUILD, FAKE_CUDA

FAKE_CUBLAS = BUILD / "tests" / "fake_cublas" / "libcublas.so.13"


def test_cuda_matmul_runs_on_cublas(py):
    out = py("""
import ctypes, os
import numpy as np
import gpukit
calls = ctypes.CDLL(os.environ["GPUKIT_CUBLAS_LIBRARY"]).fake_cublas_calls
rng = np.random.default_rng(7)
for dtype in ("float32", "float64", "complex64", "complex128"):
    def draw(*shape):
        x = rng.standard_normal(shape)
        if dtype.startswith("complex"):
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)
    for a, b in [(draw(3, 4), draw(4, 5)), (draw(2, 3, 4), draw(2, 4, 5)),
                 (draw(2, 3, 4), draw(4, 5))]:
        got = gpukit.matmul(gpukit.asarray(a, device="cuda:0"), gpukit.asarray(b, device="cuda:0"))
        assert got.dtype == dtype and got.device == "cuda:0"
        tolerance = 1e-5 if dtype in ("float32", "complex64") else 1e-12
        np.testing.assert_allclose(np.asarray(got), a @ b, rtol=tolerance, atol=tolerance)
# float16 and bfloat16: GemmEx, the halves summed in float32 and rounded
# once (no kernel converts them: the fake driver would not run it)
for dtype in ("float16", "bfloat16"):
    a = rng.standard_normal((2, 3, 8)).astype(np.float32)
    b = rng.standard_normal((8, 5)).astype(np.float32)
    ga = gpukit.astype(gpukit.asarray(a), dtype).to("cuda:0")
    gb = gpukit.astype(gpukit.asarray(b), dtype).to("cuda:0")
    got = gpukit.matmul(ga, gb)
    assert got.dtype == dtype and got.device == "cuda:0"
    halves = lambda x: np.asarray(gpukit.astype(x.to("cpu"), gpukit.float32))
    want = halves(gpukit.astype(gpukit.asarray(halves(ga) @ halves(gb)), dtype))
    np.testing.assert_allclose(halves(got), want, rtol=1e-2)
print("calls", calls())
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUBLAS_LIBRARY=FAKE_CUBLAS).stdout
    assert int(out.split("calls")[1]) == 4 * 3 + 2  # one GEMM (a batch) per product
