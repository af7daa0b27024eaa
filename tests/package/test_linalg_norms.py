"""gpukit.linalg's views, norms and stacked functions against NumPy on
every device: diagonal (a view, any offset), trace, outer, cross
(broadcast, any axis), vector_norm over axes with every kind of ord,
matrix_norm with every ord, svdvals, matrix_rank, pinv and matrix_power of
stacks; over float, integer and complex dtypes, stacks, empty and
non-finite inputs; and the errors each gives."""
import math

import numpy as np
import pytest

import gpukit as gk
from gpukit import linalg

from conftest import host, on

RNG = np.random.default_rng(7)


def close(got, expected, rtol=1e-5):
    got = host(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * 1e-3)


@pytest.mark.parametrize("offset", [0, 1, -2, 5, -7])
def test_diagonal_and_trace(device, offset):
    x = RNG.normal(size=(2, 4, 5)).astype(np.float32)
    a = on(x, device)
    d = linalg.diagonal(a, offset=offset)
    close(d, np.diagonal(x, offset=offset, axis1=-2, axis2=-1))
    close(linalg.trace(a, offset=offset), np.trace(x, offset=offset, axis1=-2, axis2=-1))
    if d.shape[-1]:  # a view: writing it writes x's elements
        d[...] = 7.0
        assert (host(linalg.diagonal(a, offset=offset)) == 7).all()
    ints = on(np.arange(12, dtype=np.int32).reshape(3, 4), device)
    assert linalg.trace(ints).item() == np.trace(np.arange(12).reshape(3, 4))
    assert linalg.trace(ints, dtype="float64").dtype == gk.float64
    with pytest.raises(ValueError, match="at least 2 axes"):
        linalg.diagonal(on(np.ones(3, np.float32), device))
    # an offset beyond every edge, the most negative one too: empty
    for far in (-2**63, -(2**63 - 1), 2**63 - 1):
        assert linalg.diagonal(a, offset=far).shape == (2, 0)
        close(linalg.trace(a, offset=far), np.zeros(2, np.float32))


def test_outer_and_cross(device):
    x, y = RNG.normal(size=5).astype(np.float32), RNG.normal(size=3).astype(np.float32)
    close(linalg.outer(on(x, device), on(y, device)), np.outer(x, y))
    u = RNG.normal(size=(4, 3)).astype(np.float64)
    v = RNG.normal(size=(1, 3)).astype(np.float64)
    close(linalg.cross(on(u, device), on(v, device)), np.cross(u, v), 1e-12)
    close(linalg.cross(on(u.T, device), on(v.T, device), axis=0), np.cross(u.T, v.T, axis=0), 1e-12)
    ints = np.array([[1, 0, 0], [0, 1, 0]], np.int64)
    close(linalg.cross(on(ints[0], device), on(ints[1], device)), np.cross(ints[0], ints[1]))
    with pytest.raises(ValueError, match="1-d"):
        linalg.outer(on(u, device), on(x, device))
    with pytest.raises(ValueError, match="length 3"):
        linalg.cross(on(x, device), on(x, device))


ORDS = [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1]


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1])
def test_vector_norm(device, ord, axis):
    x = RNG.normal(size=(3, 4, 5)).astype(np.float32)
    x[0, 0, 0] = 0
    a = on(x, device)
    expected = np.linalg.vector_norm(x, axis=axis, ord=ord)
    close(linalg.vector_norm(a, axis=axis, ord=ord), expected, 1e-4)
    close(linalg.vector_norm(a, axis=axis, ord=ord, keepdims=True),
          np.linalg.vector_norm(x, axis=axis, ord=ord, keepdims=True), 1e-4)


def test_vector_norm_dtypes_and_special_values(device):
    ints = np.arange(-4, 5, dtype=np.int16)
    close(linalg.vector_norm(on(ints, device)), np.linalg.vector_norm(ints))
    # integers and bool in float64, as NumPy: int8's float16 overflowed
    big = np.full(3, 100, np.int8)
    close(linalg.vector_norm(on(big, device), ord=3), np.linalg.vector_norm(big, ord=3))
    many = np.ones(70000, bool)
    for ord in (0, 1, 2):
        close(linalg.vector_norm(on(many, device), ord=ord), np.linalg.vector_norm(many, ord=ord))
    close(linalg.matrix_norm(on(big[:2] * np.ones((2, 2), np.int8), device), ord=1),
          np.linalg.matrix_norm(big[:2] * np.ones((2, 2), np.int8), ord=1))
    # NumPy's int ord, as a Python int
    close(linalg.vector_norm(on(ints, device), ord=np.int64(1)), np.linalg.vector_norm(ints, ord=1))
    z = (RNG.normal(size=6) + 1j * RNG.normal(size=6)).astype(np.complex64)
    close(linalg.vector_norm(on(z, device)), np.linalg.vector_norm(z))
    close(linalg.vector_norm(on(z, device), ord=1), np.linalg.vector_norm(z, ord=1))
    special = np.array([1.0, math.inf, -2.0], np.float64)
    assert linalg.vector_norm(on(special, device)).item() == math.inf
    assert math.isnan(linalg.vector_norm(on(np.array([1.0, math.nan]), device)).item())
    assert linalg.vector_norm(on(np.zeros(0, np.float32), device)).item() == 0
    # the largest of no magnitudes is 0, as NumPy's (the smallest is an error in both)
    close(linalg.vector_norm(on(np.zeros(0), device), ord=math.inf), 0.0)
    close(linalg.vector_norm(on(np.zeros((2, 0)), device), ord=math.inf, axis=1), np.zeros(2))
    with pytest.raises(ValueError):
        linalg.vector_norm(on(np.zeros(0), device), ord=-math.inf)
    with pytest.raises(TypeError, match="ord"):
        linalg.vector_norm(on(special, device), ord="fro")


@pytest.mark.skipif(not any(str(d).startswith("opencl") for d in gk.devices()),
                    reason="needs an OpenCL device")
def test_integer_norms_without_float64(py):
    # a device without float64 (many integrated GPUs; here PoCL told so)
    # measures integers in float32 instead of refusing them
    py("""
        import numpy as np
        import gpukit
        from gpukit import linalg
        x = gpukit.asarray(np.full(3, 100, np.int8), device="opencl")
        got = linalg.vector_norm(x, ord=3)
        assert got.dtype == gpukit.float32, got.dtype
        np.testing.assert_allclose(np.asarray(got), 144.2249956, rtol=1e-6)
        m = linalg.matrix_norm(gpukit.asarray(np.full((2, 2), 100, np.int8), device="opencl"))
        assert m.dtype == gpukit.float32 and float(m) == 200.0
    """, GPUKIT_OPENCL_FP64="0")


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_norm(device, ord, dtype):
    x = RNG.normal(size=(2, 3, 4, 5)).astype(dtype)
    a = on(x, device)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    close(linalg.matrix_norm(a, ord=ord), np.linalg.matrix_norm(x, ord=ord), rtol)
    close(linalg.matrix_norm(a, ord=ord, keepdims=True),
          np.linalg.matrix_norm(x, ord=ord, keepdims=True), rtol)


def test_matrix_norm_and_svdvals_edges(device):
    z = (RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))).astype(np.complex128)
    close(linalg.matrix_norm(on(z, device)), np.linalg.matrix_norm(z), 1e-12)
    close(linalg.matrix_norm(on(z, device), ord=math.inf),
          np.linalg.matrix_norm(z, ord=math.inf), 1e-12)
    x = RNG.normal(size=(4, 2, 3)).astype(np.float64)
    close(linalg.svdvals(on(x, device)), np.linalg.svdvals(x), 1e-12)
    for shape in [(0, 3), (3, 0), (0, 0), (2, 0, 3)]:
        empty = np.zeros(shape)
        for ord in ["fro", "nuc", 1, 2, math.inf]:
            close(linalg.matrix_norm(on(empty, device), ord=ord),
                  np.linalg.matrix_norm(empty, ord=ord))
    with pytest.raises(ValueError, match="'fro', 'nuc'"):
        linalg.matrix_norm(on(x, device), ord=3)
    with pytest.raises(ValueError, match="at least 2 axes"):
        linalg.matrix_norm(on(np.ones(3), device))


def test_matrix_norm_ord_none_is_frobenius(device):
    # The standard's ord is Optional and NumPy takes None for 'fro'; it
    # was a TypeError.
    x = RNG.normal(size=(2, 3, 4)).astype(np.float64)
    close(linalg.matrix_norm(on(x, device), ord=None), np.linalg.matrix_norm(x, ord=None), 1e-12)
    close(linalg.matrix_norm(on(x, device), ord=None, keepdims=True),
          np.linalg.matrix_norm(x, ord=None, keepdims=True), 1e-12)


def test_matrix_rank_and_pinv(device):
    x = RNG.normal(size=(3, 5, 4))
    x[1, :, 3] = x[1, :, 0] * 2  # one rank-deficient matrix
    a = on(x, device)
    rank = linalg.matrix_rank(a)
    assert rank.dtype == gk.int64
    assert host(rank).tolist() == np.linalg.matrix_rank(x).tolist() == [4, 3, 4]
    assert linalg.matrix_rank(a, rtol=0.9).tolist() == np.linalg.matrix_rank(x, rtol=0.9).tolist()
    close(linalg.pinv(a), np.linalg.pinv(x), 1e-9)
    close(linalg.pinv(on(x.astype(np.float32), device)), np.linalg.pinv(x.astype(np.float32)), 1e-3)
    close(linalg.pinv(a, rtol=0.5), np.linalg.pinv(x, rtol=0.5), 1e-9)
    # rtol as an array: one per matrix (the standard's Union[float, array])
    per = np.array([0.5, 1e-3, 0.9])
    assert (host(linalg.matrix_rank(a, rtol=on(per, device))).tolist()
            == np.linalg.matrix_rank(x, rtol=per).tolist())
    close(linalg.pinv(a, rtol=on(per, device)), np.linalg.pinv(x, rtol=per), 1e-9)
    assert linalg.pinv(on(np.zeros((0, 2, 3)), device)).shape == (0, 3, 2)
    assert linalg.pinv(on(np.zeros((2, 0, 3)), device)).shape == (2, 3, 0)
    z = (x + 1j * RNG.normal(size=x.shape)).astype(np.complex128)  # the conjugate transposes
    close(linalg.pinv(on(z, device)), np.linalg.pinv(z), 1e-9)
    assert host(linalg.matrix_rank(on(z, device))).tolist() == np.linalg.matrix_rank(z).tolist()
    with pytest.raises(TypeError, match="rtol"):
        linalg.pinv(a, rtol="big")


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(device, n):
    x = (RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)).astype(np.float64)
    close(linalg.matrix_power(on(x, device), n), np.linalg.matrix_power(x, n), 1e-9)
    ints = np.array([[1, 1], [1, 0]], np.int32)  # Fibonacci numbers, exact
    if n >= 0:
        got = linalg.matrix_power(on(ints, device), n)
        assert got.dtype == gk.int32
        assert host(got).tolist() == np.linalg.matrix_power(ints, n).tolist()
    with pytest.raises(ValueError, match="square"):
        linalg.matrix_power(on(np.ones((2, 3)), device), n)
    z = (x + 1j * RNG.normal(size=x.shape)).astype(np.complex64)
    close(linalg.matrix_power(on(z, device), n), np.linalg.matrix_power(z, n), 1e-4)


def test_standard_names_are_there():
    for name in ["matmul", "matrix_transpose", "tensordot", "vecdot", "diagonal", "trace",
                 "outer", "cross", "vector_norm", "matrix_norm", "svdvals", "matrix_rank",
                 "pinv", "matrix_power"]:
        assert name in linalg.__all__ and callable(getattr(linalg, name)), name
    assert linalg.vecdot is gk.vecdot and linalg.tensordot is gk.tensordot
