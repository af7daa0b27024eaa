"""Array math as gpukit functions and Array methods (python/ops.c): every
function on every device against NumPy, the array API signatures, and the
errors."""
import inspect

import numpy as np
import pytest

import gpukit as gk

from conftest import DEVICES, host, on

FLOAT_TOL = {"rtol": 2e-6, "atol": 1e-6}  # float32: a few ulps


def check(result, expected, dtype=None, tol=FLOAT_TOL):
    """result (a gpukit array) equals expected (NumPy) in shape and values,
    and has `dtype` (default: expected's)."""
    got = host(result)
    assert got.shape == np.shape(expected)
    assert result.dtype == (dtype or np.asarray(expected).dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, np.asarray(expected, dtype=got.dtype), **tol)
    else:
        np.testing.assert_array_equal(got, expected)


RNG = np.random.default_rng(7)
A34 = RNG.standard_normal((3, 4)).astype(np.float32)
B34 = RNG.standard_normal((3, 4)).astype(np.float32) + 2  # positive-ish, for pow/log
B4 = RNG.uniform(0.5, 2.0, 4).astype(np.float32)

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
UNARY = {
    "negative": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "log1p": np.log1p, "expm1": np.expm1,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "relu": lambda v: np.maximum(v, 0),
}


# --- elementwise ---

@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
def test_binary_against_numpy(device, name, dtype):
    if dtype == "float32":
        a, b = A34, np.abs(B34[0])  # (3, 4) with (4,): broadcasting
    else:
        a = RNG.integers(0, 6, (3, 4)).astype(dtype)
        b = RNG.integers(1, 4, (4,)).astype(dtype)
        if dtype == "float64":
            a = a + 0.25
    if name == "pow" and dtype == "float32":
        a = np.abs(a)
    expected = BINARY[name](a, b)
    result = getattr(gk, name)(on(a, device), on(b, device))
    if name in COMPARISONS:
        check(result, expected, "bool")
    elif name == "divide" and dtype not in ("float32", "float64"):
        check(result, expected, "float64")  # true division of integers: float64
    else:
        check(result, expected.astype(dtype), dtype)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "equal", "less"])
def test_binary_bool(device, name):
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    check(getattr(gk, name)(on(a, device), on(b, device)), BINARY[name](a, b), "bool")


def test_bool_subtract_is_an_error(device):
    x = on([True, False], device)
    with pytest.raises(TypeError, match="logical_xor"):  # NumPy's exception type
        gk.subtract(x, x)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_python_scalar_on_either_side(device, name):
    x = on(B4, device)
    for value in (2, 0.5):
        check(getattr(gk, name)(x, value), BINARY[name](B4, np.float32(value)),
              "bool" if name in COMPARISONS else "float32")
        check(getattr(gk, name)(value, x), BINARY[name](np.float32(value), B4),
              "bool" if name in COMPARISONS else "float32")


def test_scalar_promotion(device):
    i = on([1, 2, 3], device, "int32")
    check(gk.add(i, 2), np.array([3, 4, 5]), "int32")              # a value is weak
    check(gk.add(i, 2.5), np.array([3.5, 4.5, 5.5]), "float64")   # a higher kind: its default
    check(gk.subtract(10, i), np.array([9, 8, 7]), "int32")
    check(gk.subtract(0.5, i), np.array([-0.5, -1.5, -2.5]), "float64")
    check(gk.pow(2, i), np.array([2, 4, 8]), "int32")
    check(gk.divide(6, i), np.array([6, 3, 2]), "float64")
    check(gk.less(2, i), np.array([False, False, True]), "bool")
    check(gk.greater_equal(2, i), np.array([True, True, False]), "bool")
    b = on([True, False], device)
    check(gk.add(b, True), np.array([True, True]), "bool")         # bool value stays bool
    check(gk.add(b, 2), np.array([3, 2]), "int64")
    check(gk.subtract(5, b), np.array([4, 5]), "int64")
    f64 = on([1.0, 2.0], device, "float64")
    check(gk.multiply(3, f64), np.array([3.0, 6.0]), "float64")
    check(gk.add(1, 2), np.array(3), "int64")                      # two values: a 0-d array


def test_scalar_out_of_range(device):
    u = on([1, 2], device, "uint8")
    with pytest.raises(OverflowError, match="300"):
        gk.add(u, 300)
    with pytest.raises(OverflowError, match="300"):
        gk.subtract(300, u)
    with pytest.raises(OverflowError, match="-1"):
        gk.subtract(-1, u)


def test_array_likes_follow_the_array(device):
    x = on([1.0, 2.0, 3.0], device, "float32")
    result = gk.add([10, 20, 30], x)   # the list is an int64 array: NumPy's float64
    assert result.device == x.device
    check(result, np.add([10, 20, 30], np.array([1.0, 2.0, 3.0], np.float32)))
    check(gk.multiply(x, (2, 2, 2)), np.array([2, 4, 6.0], np.float64))
    # a list of Python floats is float32 (gpukit's default float for creation)
    check(gk.where([True, False, True], x, [0.5, 0.5, 0.5]), np.array([1, 0.5, 3], np.float32))
    assert gk.clip(x, [2, 2, 2], None).device == x.device
    check(gk.add([1, 2], [3, 4]), np.array([4, 6]))


@pytest.mark.skipif(len(DEVICES) < 2, reason="needs two devices")
def test_mismatched_devices():
    a = on([1.0, 2.0], DEVICES[0])
    b = on([1.0, 2.0], DEVICES[1])
    for call in (lambda: gk.add(a, b), lambda: gk.matmul(a, b), lambda: gk.where(a > 0, a, b)):
        with pytest.raises(ValueError, match="device"):
            call()


def test_broadcast_mismatch(device):
    with pytest.raises(ValueError):
        gk.add(on(np.zeros((2, 3)), device), on(np.zeros(4), device))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_numpy(device, name):
    # Inside each function's domain (its edges are the C tests' business).
    if name in ("log", "sqrt"):
        src = np.abs(A34) + 0.1
    elif name in ("asin", "acos", "atanh"):
        src = np.tanh(A34)
    elif name == "acosh":
        src = np.abs(A34) + 1
    elif name == "log1p":
        src = np.abs(A34) - 0.5
    else:
        src = A34
    check(getattr(gk, name)(on(src, device)), UNARY[name](src).astype(np.float32))
    f64 = src.astype(np.float64)
    check(getattr(gk, name)(on(f64, device)), UNARY[name](f64), tol={"rtol": 1e-12,
                                                                       "atol": 1e-12})


def test_unary_dtypes(device):
    i = on([1, -2, 3], device, "int32")
    check(gk.negative(i), np.array([-1, 2, -3]), "int32")
    check(gk.abs(i), np.array([1, 2, 3]), "int32")
    check(gk.relu(i), np.array([1, 0, 3]), "int32")
    check(gk.exp(i), np.exp(np.array([1, -2, 3])), "float64")      # NumPy's float for int32
    check(gk.exp(on([1, -2, 3], device, "int16")), np.exp(np.array([1, -2, 3], np.int16)),
          "float32")
    check(gk.sqrt([4, 9]), np.array([2.0, 3.0]), "float64")   # an array-like: int64
    with pytest.raises(TypeError):  # NumPy's exception type
        gk.negative(on([True], device))


def test_where(device):
    cond = A34 > 0
    check(gk.where(on(cond, device), on(A34, device), on(B34, device)), np.where(cond, A34, B34))
    x = on(A34, device)
    check(gk.where(gk.greater(x, 0), x, 0.0), np.where(cond, A34, np.float32(0)))
    check(gk.where(gk.greater(x, 0), 1, x), np.where(cond, np.float32(1), A34))
    i = on([1, 2, 3], device, "int32")
    check(gk.where(gk.greater(i, 1), i, 7), np.array([7, 2, 3]), "int32")
    check(gk.where(gk.greater(i, 1), i, 0.5), np.array([0.5, 2, 3]), "float64")
    with pytest.raises(TypeError, match="bool"):  # a dtype where() does not take
        gk.where(i, i, i)


def test_clip(device):
    x = on(A34, device)
    check(gk.clip(x, -0.5, 0.5), np.clip(A34, -0.5, 0.5))
    check(gk.clip(x, min=0), np.clip(A34, 0, None))
    check(gk.clip(x, max=0), np.clip(A34, None, 0))
    check(gk.clip(x), A34)
    check(gk.clip(x, 1, -1), np.full_like(A34, -1))             # min > max: every element max
    low = on(np.full(4, -0.2, np.float32), device)
    check(gk.clip(x, low, 0.3), np.clip(A34, -0.2, 0.3))        # an array bound broadcasts
    u = on([0, 100, 255], device, "uint8")
    check(gk.clip(u, -3, 300), np.array([0, 100, 255]), "uint8")  # bounds beyond the dtype
    check(gk.clip(u, min=-3), np.array([0, 100, 255]), "uint8")
    check(gk.clip(u, max=300), np.array([0, 100, 255]), "uint8")
    check(gk.clip(u, 10, 200), np.array([10, 100, 200]), "uint8")
    i = on([1, 5, 9], device, "int32")
    check(gk.clip(i, min=3), np.array([3, 5, 9]), "int32")
    # Python ints beside integers: exact beyond 2^53, the dtype kept
    big = gk.asarray([2 ** 62 + 1, 2 ** 53 + 1, -3], device=device)
    assert gk.clip(big, 0, 2 ** 62).tolist() == [2 ** 62, 2 ** 53 + 1, 0]
    assert gk.clip(big, 2 ** 53 + 3).tolist() == [2 ** 62 + 1, 2 ** 53 + 3, 2 ** 53 + 3]
    top = gk.asarray([2 ** 64 - 1], dtype="uint64", device=device)
    assert gk.clip(top, 0, 2 ** 64 - 2).tolist() == [2 ** 64 - 2]
    assert gk.clip(big, 0, np.iinfo(np.int64).max).dtype == "int64"
    assert gk.clip(on([5], device, "int8"), 2 ** 70).tolist() == [127]


def test_astype(device):
    x = on(A34, device)
    check(gk.astype(x, gk.float64), A34.astype(np.float64))
    check(gk.astype(x, "int32"), A34.astype(np.int32))
    check(gk.astype(on([0, 2], device), gk.bool), np.array([False, True]))
    assert gk.astype(x, gk.float32, copy=False) is x
    y = gk.astype(x, gk.float32)
    assert y is not x
    moved = gk.astype(x, gk.float64, device="cpu")
    assert str(moved.device) == "cpu"
    check(moved, A34.astype(np.float64))
    with pytest.raises(TypeError):
        gk.astype(x, "float128")


def test_matmul(device):
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 5)).astype(np.float32)
    check(gk.matmul(on(a, device), on(b, device)), a @ b, tol={"rtol": 1e-5, "atol": 1e-5})
    v = RNG.standard_normal(4).astype(np.float32)
    check(gk.matmul(on(b.T, device), on(v, device)), b.T @ v, tol={"rtol": 1e-5, "atol": 1e-5})
    i = on([[1, 2], [3, 4]], device, "int32")
    check(gk.matmul(i, i), np.array([[7, 10], [15, 22]], dtype=np.int32), "int32")  # NumPy's dtype
    with pytest.raises(ValueError, match="inner"):
        gk.matmul(on(a, device), on(a, device))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_matmul_of_transposed_views(device, dtype):
    """Operands stored transposed (x.T of a C-order matrix, a stack with its
    last two axes swapped) are read in place: on the CPU through BLAS's
    transpose flags, and x.T @ x and x @ x.T of real x through SYRK, whose
    result is exactly symmetric (as NumPy's); on a GPU by cuBLAS's op T or
    by the tiled kernel's strip loads. All against NumPy, with vectors,
    offset views, batches and broadcasting."""
    rng = np.random.default_rng(11)

    def sample(*shape):
        x = rng.standard_normal(shape)
        if dtype.startswith("complex"):
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)

    x, y, s, w = sample(50, 30), sample(50, 40), sample(3, 20, 10), sample(150, 70)
    v, z = sample(20, 50), sample(7, 10)
    gx, gy, gs, gw = on(x, device), on(y, device), on(s, device), on(w, device)
    gv, gz = on(v, device), on(z, device)
    st = np.swapaxes(s, -1, -2)
    gst = gk.matrix_transpose(gs)
    cases = [
        (gx.T @ gx, x.T @ x), (gx @ gx.T, x @ x.T), (gx.T @ gy, x.T @ y), (gy.T @ gx, y.T @ x),
        (gx[1:].T @ gx[1:], x[1:].T @ x[1:]), (gx[:, 2:].T @ gy, x[:, 2:].T @ y),
        (gx.T @ gx[:, :1], x.T @ x[:, :1]), (gx.T @ on(y[:, 0].copy(), device), x.T @ y[:, 0]),
        (on(y[0, :30].copy(), device) @ gx.T, y[0, :30] @ x.T),
        (gst @ gs, st @ s), (gs @ gst, s @ st), (gst @ gs[0], st @ s[0]),
        (gk.matmul(gx.T, gx.T.T), x.T @ x),
        (gx.T @ gv.T, x.T @ v.T), (gs @ gz.T, s @ z.T),  # both transposed; a stack @ b.T
        (gw @ gw.T, w @ w.T), (gw.T @ gw, w.T @ w),  # mirrored in 64 x 64 tiles and part tiles
    ]
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype in ("float32", "complex64") else \
        {"rtol": 1e-10, "atol": 1e-10}
    for got, expected in cases:
        result = host(got)
        assert result.shape == expected.shape and str(got.dtype) == dtype
        np.testing.assert_allclose(result, expected, **tol)
    if device == "cpu" and not dtype.startswith("complex"):
        # SYRK's promise; a GPU's GEMM (cuBLAS's, as CuPy's) makes none
        gram = host(gw @ gw.T)
        assert np.array_equal(gram, gram.T)


# --- reductions ---

X3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
AXES = [None, 0, 1, -1, (0, 2), (2, 0), (), (0, 1, 2), (-1, 1)]
REDUCTIONS = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "min": np.min, "max": np.max,
              "var": np.var, "std": np.std}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_against_numpy(device, name):
    x = on(X3, device)
    for axis in AXES:
        for keepdims in (False, True):
            expected = REDUCTIONS[name](X3.astype(np.float64), axis=axis, keepdims=keepdims)
            check(getattr(gk, name)(x, axis=axis, keepdims=keepdims),
                  expected.astype(np.float32), "float32", tol={"rtol": 1e-5, "atol": 1e-5})
            # the method takes the same keywords, and axis by position too
            method = getattr(x, name)
            check(method(axis, keepdims=keepdims), expected.astype(np.float32), "float32",
                  tol={"rtol": 1e-5, "atol": 1e-5})


@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_arg_reductions(device, name):
    x = on(X3, device)
    ref = getattr(np, name)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            expected = ref(X3, axis=axis, keepdims=keepdims)
            check(getattr(gk, name)(x, axis=axis, keepdims=keepdims), expected, "int64")
            check(getattr(x, name)(axis, keepdims=keepdims), expected, "int64")
    ties = on([3, 1, 1, 3], device, "int32")
    assert int(host(getattr(gk, name)(ties))) == (1 if name == "argmin" else 0)  # the first
    with pytest.raises(TypeError, match="axis"):
        getattr(gk, name)(x, axis=(0, 1))


def test_reduction_dtypes(device):
    i = on([[1, 2, 3], [4, 5, 6]], device, "int32")
    check(gk.sum(i), np.array(21), "int64")
    check(gk.sum(i, axis=(0, 1)), np.array(21), "int64")
    check(gk.prod(i, axis=1), np.array([6, 120]), "int64")
    check(gk.mean(i, axis=0), np.array([2.5, 3.5, 4.5]), "float64")
    check(gk.var(i), np.var(np.arange(1, 7)), "float64")
    check(gk.min(i, axis=0), np.array([1, 2, 3]), "int32")
    check(gk.sum(i, dtype=gk.int32), np.array(21, np.int32), "int32")
    check(gk.sum(i, axis=1, dtype="float32"), np.array([6, 15], np.float32), "float32")
    check(gk.sum(on(A34, device), dtype=gk.float64), A34.astype(np.float64).sum(), "float64",
          tol={"rtol": 1e-12, "atol": 0})
    check(gk.sum(on([True, True, False], device)), np.array(2), "int64")
    check(gk.max(on([True, False], device)), np.array(True), "bool")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16"])
def test_sums_of_narrow_dtypes_over_long_rows(device, dtype):
    """The CPU counts bools in byte lanes (255 rows of 32) and adds 8- and
    16-bit integers in int32 blocks of 2^15 elements: rows that fill and
    cross those blocks, at the dtype's extremes, strided and by rows."""
    n = 3 * 32768 + 255 * 32 + 37
    if dtype == "bool":  # any nonzero byte is True
        raw = RNG.integers(0, 4, n).astype(np.uint8) * 85
        arrays = [raw.view(np.bool_), np.ones(n, np.bool_), np.zeros(n, np.bool_)]
    else:
        info = np.iinfo(dtype)
        arrays = [RNG.integers(info.min, info.max, n, endpoint=True).astype(dtype),
                  np.full(n, info.max, dtype), np.full(n, info.min, dtype)]
    for a in arrays:
        counts = a.view(np.uint8) != 0 if dtype == "bool" else a.astype(np.int64)
        x = gk.asarray(a, device=device)  # the bytes as they are (not through a list)
        assert int(host(gk.sum(x))) == int(counts.sum())
        assert int(host(gk.sum(x[5::3]))) == int(counts[5::3].sum())
        rows = counts[: n - n % 4].reshape(4, -1)
        total = "uint64" if dtype.startswith("u") else "int64"  # the array API's sum dtype
        check(gk.sum(x[: n - n % 4].reshape(4, -1), axis=1), rows.sum(axis=1), total)
        if dtype == "bool":
            assert int(host(gk.count_nonzero(x))) == int(counts.sum())
            assert bool(host(gk.all(x))) == bool(counts.all())
            assert bool(host(gk.any(x))) == bool(counts.any())


def test_var_std_correction(device):
    x = on(X3, device)
    ref = X3.astype(np.float64)
    tol = {"rtol": 1e-5, "atol": 1e-6}
    for correction in (0, 1, 2, 0.5):
        for name in ("var", "std"):
            expected = getattr(np, name)(ref, axis=1, ddof=correction).astype(np.float32)
            check(getattr(gk, name)(x, axis=1, correction=correction), expected, tol=tol)
            check(getattr(gk, name)(x, axis=1, ddof=correction), expected, tol=tol)
            check(getattr(x, name)(1, correction=correction), expected, tol=tol)
    expected = np.var(ref, axis=(0, 2), ddof=1, keepdims=True).astype(np.float32)
    check(gk.var(x, axis=(0, 2), correction=1, keepdims=True), expected, tol=tol)
    with pytest.raises(TypeError, match="ddof"):
        gk.var(x, correction=1, ddof=1)
    with pytest.raises(ValueError, match="correction"):
        gk.std(x, correction=-1)


def test_reduction_errors(device):
    x = on(X3, device)
    with pytest.raises(ValueError, match=r"axis 3 is out of range for shape \(3, 4, 5\)"):
        gk.sum(x, axis=3)
    with pytest.raises(ValueError, match=r"\(3, 4, 5\)"):
        gk.mean(x, axis=(0, -4))
    with pytest.raises(ValueError, match=r"\(3, 4, 5\)"):
        x.max(5)
    with pytest.raises(ValueError, match="twice"):
        gk.sum(x, axis=(1, -2))
    with pytest.raises(TypeError, match="axis"):
        gk.sum(x, axis=1.5)
    with pytest.raises(TypeError):
        gk.sum(x, 0)  # axis is keyword-only in the function
    with pytest.raises(TypeError, match="unexpected keyword"):
        gk.mean(x, dtype=gk.float64)
    empty = on(np.zeros((0, 3), np.float32), device)
    for name in ("min", "max", "argmin", "argmax"):
        with pytest.raises(ValueError, match="zero-size"):
            getattr(gk, name)(empty)
    check(gk.sum(empty), np.array(0, np.float32))
    check(gk.prod(empty, axis=0), np.ones(3, np.float32))
    check(gk.min(empty, axis=1), np.zeros(0, np.float32))  # no empty reduction: no error
    with pytest.raises(ValueError, match="zero-size"):
        gk.max(empty, axis=0)


def test_zero_d_reductions(device):
    s = on(np.float32(2.5), device)
    check(gk.sum(s), np.array(2.5, np.float32))
    check(gk.max(s, axis=0), np.array(2.5, np.float32))
    check(gk.mean(s, axis=-1, keepdims=True), np.array(2.5, np.float32))
    check(gk.sum(s, axis=()), np.array(2.5, np.float32))


# --- sorting and scans ---

def test_sort_and_argsort(device):
    x = on(X3, device)
    for axis in (0, 1, -1, 2):
        check(gk.sort(x, axis=axis), np.sort(X3, axis=axis))
        check(gk.argsort(x, axis=axis), np.argsort(X3, axis=axis, kind="stable"), "int64")
        check(gk.sort(x, axis=axis, descending=True), -np.sort(-X3, axis=axis))
        check(gk.argsort(x, axis=axis, descending=True),
              np.argsort(-X3, axis=axis, kind="stable"), "int64")
    with pytest.raises(ValueError, match=r"out of range for shape \(3, 4, 5\)"):
        gk.sort(x, axis=3)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float32", "float64"])
def test_argsort_is_stable_both_ways(device, dtype):
    keys = np.array([[3, 1, 2, 1, 3, 2, 1, 0], [5, 5, 5, 5, 1, 1, 1, 1]], dtype=dtype)
    x = on(keys, device)
    check(gk.argsort(x), np.argsort(keys, kind="stable"), "int64")
    # descending, equal keys in their original order: the stable sort of -key
    expected = np.argsort(-keys.astype(np.int64), axis=-1, kind="stable")
    check(gk.argsort(x, descending=True), expected, "int64")
    check(gk.argsort(x, axis=0, descending=True),
          np.argsort(-keys.astype(np.int64), axis=0, kind="stable"), "int64")
    check(gk.sort(x, descending=True), -np.sort(-keys.astype(np.int64)), dtype)
    check(gk.sort(x, descending=True, stable=False), -np.sort(-keys.astype(np.int64)), dtype)


def test_sort_nans(device):
    values = np.array([2.0, np.nan, -1.0, np.nan, 0.0], np.float32)
    x = on(values, device)
    check(gk.sort(x), np.sort(values))  # NaN last
    got = host(gk.sort(x, descending=True))
    assert np.isnan(got[:2]).all() and list(got[2:]) == [2.0, 0.0, -1.0]
    assert list(host(gk.argsort(x, descending=True))) == [1, 3, 0, 4, 2]


def test_sort_methods(device):
    x = on(X3, device)
    assert x.sort(1) is None  # in place, as NumPy and CuPy
    check(x, np.sort(X3, axis=1))
    y = on(X3, device)
    y.sort(descending=True)
    check(y, -np.sort(-X3, axis=-1))
    check(on(X3, device).argsort(0), np.argsort(X3, axis=0, kind="stable"), "int64")


def test_cumulative_sum(device):
    x = on(X3, device)
    tol = {"rtol": 1e-5, "atol": 1e-5}
    for axis in (0, 1, -1):
        check(gk.cumulative_sum(x, axis=axis), np.cumsum(X3, axis=axis), tol=tol)
        check(gk.cumsum(x, axis), np.cumsum(X3, axis=axis), tol=tol)
        check(x.cumsum(axis), np.cumsum(X3, axis=axis), tol=tol)
    check(gk.cumsum(x), np.cumsum(X3), tol=tol)            # NumPy: flattened
    check(x.cumsum(), np.cumsum(X3), tol=tol)
    with pytest.raises(ValueError, match="axis must be given"):
        gk.cumulative_sum(x)                                 # the standard: no flattening
    v = on([1, 2, 3], device, "int32")
    check(gk.cumulative_sum(v), np.array([1, 3, 6]), "int64")
    check(gk.cumulative_sum(v, dtype=gk.int32), np.array([1, 3, 6]), "int32")
    check(gk.cumulative_sum(v, include_initial=True), np.array([0, 1, 3, 6]), "int64")
    expected = np.concatenate([np.zeros((3, 1, 5), np.float32), np.cumsum(X3, axis=1)], axis=1)
    check(gk.cumulative_sum(x, axis=1, include_initial=True), expected, tol=tol)
    check(gk.cumsum(on([True, True, False], device)), np.array([1, 2, 2]), "int64")
    with pytest.raises(TypeError, match="include_initial"):
        gk.cumsum(v, include_initial=True)
    with pytest.raises(ValueError, match="out of range"):
        gk.cumulative_sum(x, axis=3)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_cumulative_sum_keeps_negative_zero(device, dtype):
    # a running sum started from +0.0 turned a leading -0.0 into +0.0;
    # NumPy's cumsum starts from the first element (long rows: the GPU's
    # blocks and carries)
    for n in (5, 5000):
        nx = np.full(n, -0.0, dtype)
        nx[2] = 1.0
        got = host(gk.cumulative_sum(on(nx, device)))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.cumsum(nx)))
    nx = np.full((40, 3), -0.0, dtype)
    got = host(gk.cumulative_sum(on(nx, device), axis=0))
    assert np.signbit(got).all()


# --- views ---

def test_reshape(device):
    base = np.arange(24, dtype=np.float32)
    x = on(base, device)
    check(gk.reshape(x, (2, 3, 4)), base.reshape(2, 3, 4))
    check(gk.reshape(x, (4, -1)), base.reshape(4, -1))
    check(gk.reshape(x, shape=24), base)
    check(gk.reshape(x, (2, 12), copy=True), base.reshape(2, 12))
    check(gk.reshape(x, (2, 12), copy=False), base.reshape(2, 12))
    t = gk.permute_dims(gk.reshape(x, (4, 6)), (1, 0))
    check(gk.reshape(t, (24,)), base.reshape(4, 6).T.reshape(24))  # a copy is made
    with pytest.raises(ValueError, match="copy"):
        gk.reshape(t, (24,), copy=False)
    with pytest.raises(ValueError, match="reshape"):
        gk.reshape(x, (5, 5))


def test_permute_broadcast_transpose(device):
    x = on(X3, device)
    check(gk.permute_dims(x, (2, 0, 1)), np.transpose(X3, (2, 0, 1)))
    check(gk.permute_dims(x, (-1, 0, 1)), np.transpose(X3, (2, 0, 1)))
    with pytest.raises(ValueError):
        gk.permute_dims(x, (0, 1))
    with pytest.raises(ValueError):
        gk.permute_dims(x, (0, 0, 1))
    check(gk.matrix_transpose(x), np.swapaxes(X3, -1, -2))
    with pytest.raises(ValueError, match="2 or more"):
        gk.matrix_transpose(on([1.0, 2.0], device))
    row = on(B4, device)
    check(gk.broadcast_to(row, (3, 4)), np.broadcast_to(B4, (3, 4)))
    check(gk.broadcast_to(row, shape=(2, 1, 4)), np.broadcast_to(B4, (2, 1, 4)))
    with pytest.raises(ValueError):
        gk.broadcast_to(row, (3, 5))


# --- the Python face ---

FUNCTIONS = sorted(BINARY) + sorted(UNARY) + [
    "where", "clip", "astype", "matmul", "sum", "prod", "mean", "min", "max", "argmin",
    "argmax", "var", "std", "sort", "argsort", "cumulative_sum", "cumsum", "reshape",
    "permute_dims", "broadcast_to", "matrix_transpose"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signatures_and_docs(name):
    function = getattr(gk, name)
    signature = inspect.signature(function)
    assert function.__doc__ and len(function.__doc__) > 30
    first = next(iter(signature.parameters.values()))
    assert first.kind == inspect.Parameter.POSITIONAL_ONLY  # x / x1 / condition


def test_standard_signatures():
    assert str(inspect.signature(gk.sum)) == "(x, /, *, axis=None, dtype=None, keepdims=False)"
    assert str(inspect.signature(gk.sort)) == \
        "(x, /, *, axis=-1, descending=False, stable=True)"
    assert str(inspect.signature(gk.cumulative_sum)) == \
        "(x, /, *, axis=None, dtype=None, include_initial=False)"
    assert str(inspect.signature(gk.clip)) == "(x, /, min=None, max=None)"
    assert str(inspect.signature(gk.astype)) == "(x, dtype, /, *, copy=True, device=None)"
    x = gk.asarray([1.0])
    for name in ("sum", "prod", "mean", "min", "max", "argmin", "argmax", "var", "std", "sort",
                 "argsort", "cumsum"):
        method = getattr(x, name)
        assert method.__doc__ and "axis" in str(inspect.signature(method))


def test_keyword_errors():
    x = gk.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="unexpected keyword"):
        gk.sum(x, axes=0)
    with pytest.raises(TypeError, match="'x'"):
        gk.sum(x=x)
    with pytest.raises(TypeError, match="multiple values"):
        x.sum(0, axis=0)
    with pytest.raises(TypeError):
        gk.add(x)
    with pytest.raises(TypeError):
        gk.add(x, x, x)


def test_large_arrays_release_the_gil(device):
    """Arrays past the GIL threshold go through the released-GIL path; the
    results must be the same as for small ones."""
    big = RNG.standard_normal(70000).astype(np.float32)
    x = on(big, device)
    check(gk.add(x, 1.0), big + 1)
    check(gk.sum(x), np.array(big.astype(np.float64).sum(), np.float32),
          tol={"rtol": 1e-5, "atol": 1e-3})
    check(gk.sort(x, descending=True), -np.sort(-big))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(1000, 37), (70000, 3), (300, 64, 5)])
def test_argmin_argmax_along_leading_axis(device, dtype, shape):
    """Reductions of columns side by side (the GPUs' coalesced _cols
    kernels): the first NaN, else the first extreme, as NumPy."""
    rng = np.random.default_rng(16)
    x = rng.integers(0, 2 if dtype == "bool" else 20, shape).astype(dtype)
    if dtype.startswith("float"):
        x.flat[rng.integers(0, x.size, 3)] = np.nan
    a = gk.asarray(x, device=device)
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(np.asarray(getattr(gk, name)(a, axis=0)),
                                      getattr(np, name)(x, axis=0))
