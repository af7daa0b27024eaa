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


def test_cuda_matmul_reads_transposed_operands_in_place(py):
    """x.T of a C-order matrix (and a stack with its last two axes swapped)
    goes to cuBLAS as it is stored, with op T, for every GEMM: the fake
    driver runs no kernels, so a transposing copy would leave the operand
    unwritten and the product wrong."""
    out = py("""
import ctypes, os
import numpy as np
import gpukit
calls = ctypes.CDLL(os.environ["GPUKIT_CUBLAS_LIBRARY"]).fake_cublas_calls
rng = np.random.default_rng(3)
products = 0
for dtype in ("float32", "float64", "complex64", "complex128", "float16", "bfloat16"):
    def draw(*shape):
        x = rng.standard_normal(shape)
        if dtype.startswith("complex"):
            x = x + 1j * rng.standard_normal(shape)
        return x
    def on_gpu(x):
        if dtype in ("float16", "bfloat16"):  # converted on the host: no kernel runs
            return gpukit.astype(gpukit.asarray(x.astype(np.float32)), dtype).to("cuda:0")
        return gpukit.asarray(x.astype(dtype), device="cuda:0")
    def host(x):
        return np.asarray(gpukit.astype(x.to("cpu"), "complex128" if dtype.startswith("complex")
                                        else "float64"))
    x, y, s, v, z = draw(7, 5), draw(7, 6), draw(3, 4, 6), draw(6, 7), draw(3, 6)
    gx, gy, gs, gv, gz = on_gpu(x), on_gpu(y), on_gpu(s), on_gpu(v), on_gpu(z)
    gst = gpukit.matrix_transpose(gs)
    x, y, s, v, z = host(gx), host(gy), host(gs), host(gv), host(gz)  # as the dtype holds them
    st = np.swapaxes(s, -1, -2)
    cases = [(gx.T @ gy, x.T @ y), (gx @ gx.T, x @ x.T), (gx.T @ gx, x.T @ x),
             (gst @ gs, st @ s), (gs @ gst, s @ st), (gst @ gs[0], st @ s[0]),
             (gx.T @ gv.T, x.T @ v.T), (gs @ gz.T, s @ z.T)]  # both op T; a stack @ b.T
    for got, want in cases:
        assert got.dtype == dtype and got.device == "cuda:0" and got.shape == want.shape
        tolerance = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-5, "complex64": 1e-5}
        tolerance = tolerance.get(dtype, 1e-12)
        np.testing.assert_allclose(host(got), want, rtol=tolerance, atol=tolerance * 10)
        products += 1
print("calls", calls(), products)
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA, GPUKIT_CUBLAS_LIBRARY=FAKE_CUBLAS).stdout
    calls, products = out.split("calls")[1].split()
    assert int(calls) == int(products)  # one GEMM each, no other call
