"""The rest of the array API's main namespace (python/utility.c): meshgrid,
tril, triu, tensordot, vecdot, cumulative_prod, all, any, diff and the
constants; and the statistics and sorting functions of python/ops.c in
every dtype. Each on every device against NumPy 2 (the reference where the
standard leaves freedom), over every dtype the function takes, empty and
0-d inputs, and every error a user can cause."""
import inspect
import math

import numpy as np
import pytest

import gpukit as gk
from conftest import host, on

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
NUMERIC = [d for d in DTYPES if d != "bool"]
FLOAT_TOL = {"rtol": 1e-5, "atol": 1e-6}


def sample(dtype, shape, seed=0, low=-4, high=5):
    """Small values of `dtype` (no overflow in sums and short products);
    floats with a fractional part."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        return (rng.integers(low, high, shape) + rng.uniform(-0.5, 0.5, shape)).astype(dtype)
    if dtype.startswith("uint"):
        low = 0
    return rng.integers(low, high, shape).astype(dtype)


def same(x, expected, tol=FLOAT_TOL):
    """x (a gpukit Array) has expected's shape, dtype and values (floats
    within tol, NaN where NaN)."""
    expected = np.asarray(expected)
    assert type(x) is gk.Array
    assert x.shape == expected.shape, (x.shape, expected.shape)
    assert str(x.dtype) == expected.dtype.name, (x.dtype, expected.dtype)
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(host(x), expected, equal_nan=True, **tol)
    else:
        np.testing.assert_array_equal(host(x), expected)


# --- constants ------------------------------------------------------------------

def test_constants():
    assert gk.__array_api_version__ == "2025.12"
    assert type(gk.e) is float and gk.e == math.e
    assert type(gk.pi) is float and gk.pi == math.pi
    assert type(gk.inf) is float and gk.inf == math.inf
    assert type(gk.nan) is float and math.isnan(gk.nan)
    assert gk.newaxis is None
    x = gk.asarray([1.0, 2.0])
    assert x[gk.newaxis, :, gk.newaxis].shape == (1, 2, 1)
    import gpukit._gpukit as extension
    assert extension.__array_api_version__ == "2025.12"


# --- cumulative_prod (and cumulative_sum through the same library call) -----------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["cumulative_prod", "cumulative_sum"])
def test_cumulative_matches_numpy(device, dtype, name):
    ours, theirs = getattr(gk, name), getattr(np, name)
    for shape, axes in [((6,), [None, 0, -1]), ((3, 4), [0, 1, -1, -2]),
                        ((2, 0, 3), [0, 1, 2]), ((0,), [None])]:
        a = sample(dtype, shape, seed=len(shape), low=-2, high=3)
        x = on(a, device)
        for axis in axes:
            for initial in (False, True):
                same(ours(x, axis=axis, include_initial=initial),
                     theirs(a, axis=axis, include_initial=initial))
    # strided and reversed views
    a = sample(dtype, (4, 6), seed=5, low=-2, high=3)
    x = on(a, device)
    same(ours(x[:, ::-2], axis=1), theirs(a[:, ::-2], axis=1))
    same(ours(x.T, axis=0, include_initial=True), theirs(a.T, axis=0, include_initial=True))


@pytest.mark.parametrize("name", ["cumulative_prod", "cumulative_sum"])
def test_cumulative_dtype_argument(device, name):
    ours, theirs = getattr(gk, name), getattr(np, name)
    a = np.array([100, 3, 3, -2], np.int8)
    x = on(a, device)
    for dtype in DTYPES:
        # computed in dtype: int8 wraps in 8 bits, bool is and/or
        same(ours(x, dtype=dtype), theirs(a, dtype=dtype))
        same(ours(x, dtype=getattr(gk, dtype), include_initial=True),
             theirs(a, dtype=dtype, include_initial=True))
    f = np.array([0.5, 1.5, 2.5], np.float32)
    same(ours(on(f, device), dtype="float64"), theirs(f, dtype="float64"))


def test_cumulative_prod_wraps_like_numpy(device):
    a = np.array([1 << 40, 1 << 30, 3, -1], np.int64)
    same(gk.cumulative_prod(on(a, device)), np.cumulative_prod(a))
    u = np.full(45, 3, np.uint64)
    same(gk.cumulative_prod(on(u, device)), np.cumulative_prod(u))


def test_cumulative_prod_long_rows(device):
    """Long rows and many rows (the GPU's block scans, with pieces)."""
    rng = np.random.default_rng(3)
    f = rng.uniform(0.999, 1.001, (3, 70000)).astype(np.float32)
    x = on(f, device)
    expected = np.cumulative_prod(f.astype(np.float64), axis=1).astype(np.float32)
    same(gk.cumulative_prod(x, axis=1), expected, tol={"rtol": 1e-4, "atol": 0})
    same(gk.cumulative_prod(gk.permute_dims(x, (1, 0)), axis=0), expected.T,
         tol={"rtol": 1e-4, "atol": 0})
    i = rng.choice(np.array([1, 1, 1, -1], np.int32), 70000)
    i[::9000] = 2  # a product of at most 2^8: exact
    same(gk.cumulative_prod(on(i, device)), np.cumulative_prod(i))


def test_cumulative_prod_zero_d_and_errors(device):
    s = on(np.float32(5), device)
    same(gk.cumulative_prod(s), np.cumulative_prod(np.float32(5)))
    same(gk.cumulative_prod(s, include_initial=True),
         np.cumulative_prod(np.array(5, np.float32), include_initial=True))
    x = on(np.ones((2, 3), np.float32), device)
    with pytest.raises(ValueError, match=r"axis must be given for a 2-d array \(shape \(2, 3\)\)"):
        gk.cumulative_prod(x)
    with pytest.raises(ValueError, match=r"axis 2 is out of range for shape \(2, 3\)"):
        gk.cumulative_prod(x, axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        gk.cumulative_prod(x, axis=1.0)
    same(gk.cumulative_prod(x, axis=0, dtype="complex64"),
         np.cumulative_prod(np.ones((2, 3), np.float32), axis=0, dtype=np.complex64))
    with pytest.raises(TypeError):
        gk.cumulative_prod(x, axis=0, dtype="float128")
    with pytest.raises(TypeError, match="unexpected keyword"):
        gk.cumulative_prod(x, axes=0)
    with pytest.raises(TypeError, match="at most 1 positional"):
        gk.cumulative_prod(x, 0)


# --- all, any ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_all_any_match_numpy(device, dtype):
    for shape in [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]:
        a = sample(dtype, shape, seed=len(shape), low=0, high=3)  # zeros and ones, twos
        if a.ndim and a.size:
            a.flat[0] = 1  # some rows all nonzero
        x = on(a, device)
        nd = a.ndim
        axes = [None, ()] + list(range(-nd, nd)) + ([(0, nd - 1), tuple(range(nd))] if nd >= 2 else [])
        for axis in axes:
            for keepdims in (False, True):
                same(gk.all(x, axis=axis, keepdims=keepdims), np.all(a, axis=axis, keepdims=keepdims))
                same(gk.any(x, axis=axis, keepdims=keepdims), np.any(a, axis=axis, keepdims=keepdims))


def test_all_any_nan_and_errors(device):
    a = np.array([[np.nan, 1.0], [0.0, -0.0]], np.float64)
    x = on(a, device)
    for axis in (None, 0, 1):
        same(gk.all(x, axis=axis), np.all(a, axis=axis))  # NaN is true
        same(gk.any(x, axis=axis), np.any(a, axis=axis))  # -0.0 is false
    same(gk.all([1, 2, 3]), np.all([1, 2, 3]))  # array-likes
    with pytest.raises(ValueError, match=r"all: axis 2 is out of range for shape \(2, 2\)"):
        gk.all(x, axis=2)
    with pytest.raises(ValueError, match="any: axis -1 is listed twice"):
        gk.any(x, axis=(1, -1))
    with pytest.raises(TypeError, match="axis must be an int"):
        gk.any(x, axis=1.5)
    with pytest.raises(TypeError, match="axis must be an int or a sequence"):
        gk.all(x, axis="0")
    with pytest.raises(TypeError, match="unexpected keyword"):
        gk.all(x, dtype="bool")


# --- diff -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_diff_matches_numpy(device, dtype):
    a = sample(dtype, (3, 5), seed=1)
    x = on(a, device)
    for axis in (-1, 0, 1, -2):
        for n in (0, 1, 2, 3, 5, 9):
            if n == 0:  # NumPy returns the input itself
                same(gk.diff(x, axis=axis, n=0), a)
                continue
            same(gk.diff(x, axis=axis, n=n), np.diff(a, axis=axis, n=n))
    # prepend/append arrays (x's dtype), broadcasting a 0-d one
    p, q = sample(dtype, (3, 2), seed=2), sample(dtype, (3, 1), seed=3)
    same(gk.diff(x, prepend=on(p, device), append=on(q, device)),
         np.diff(a, prepend=p, append=q))
    same(gk.diff(x, axis=0, n=2, prepend=on(a[0], device)[gk.newaxis]),
         np.diff(a, axis=0, n=2, prepend=a[:1]))
    zero_d = sample(dtype, (), seed=4)
    same(gk.diff(x, prepend=on(zero_d, device)), np.diff(a, prepend=zero_d))
    # a reversed view, a 1-d and an empty array
    same(gk.diff(x[:, ::-1]), np.diff(a[:, ::-1]))
    same(gk.diff(x[0]), np.diff(a[0]))
    same(gk.diff(on(a[:, :0], device)), np.diff(a[:, :0]))


def test_diff_python_scalars_are_weak(device):
    """Python numbers take x's dtype where their kind allows (the standard's
    rule for scalars; NumPy would make them int64/float64 arrays)."""
    a = np.array([1, 5, 2], np.int8)
    got = gk.diff(on(a, device), prepend=0, append=10)
    same(got, np.diff(a, prepend=np.int8(0), append=np.int8(10)))
    f = np.array([0.5, 2.0], np.float32)
    same(gk.diff(on(f, device), prepend=1.5), np.diff(f, prepend=np.float32(1.5)))
    same(gk.diff(on(a, device), append=2.5), np.diff(a.astype(np.float64), append=2.5))
    b = np.array([True, False])
    same(gk.diff(on(b, device), prepend=True), np.diff(b, prepend=True))
    with pytest.raises(OverflowError):
        gk.diff(on(a, device), prepend=300)


def test_diff_errors(device):
    x = on(np.arange(6, dtype=np.float32).reshape(2, 3), device)
    with pytest.raises(ValueError, match="0-d; it needs at least one axis"):
        gk.diff(on(np.float32(1), device))
    with pytest.raises(ValueError, match="n is -1; it must be 0 or more"):
        gk.diff(x, n=-1)
    with pytest.raises(TypeError, match="n must be an int"):
        gk.diff(x, n=1.0)
    with pytest.raises(ValueError, match=r"diff: axis 2 is out of range for shape \(2, 3\)"):
        gk.diff(x, axis=2)
    with pytest.raises(ValueError, match=r"diff: prepend has shape \(3,\)"):
        gk.diff(x, prepend=on(np.zeros(3, np.float32), device))
    with pytest.raises(ValueError, match="diff:"):
        gk.diff(x, axis=0, append=on(np.zeros((1, 2), np.float32), device))
    with pytest.raises(TypeError, match="at most 1 positional"):
        gk.diff(x, 0)


# --- meshgrid, tril, triu -----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_meshgrid_matches_numpy(device, dtype):
    a, b, c = sample(dtype, (3,), 1), sample(dtype, (2,), 2), sample(dtype, (4,), 3)
    xa, xb, xc = on(a, device), on(b, device), on(c, device)
    for indexing in ("xy", "ij"):
        for arrays, inputs in [((a,), (xa,)), ((a, b), (xa, xb)), ((a, b, c), (xa, xb, xc))]:
            got = gk.meshgrid(*inputs, indexing=indexing)
            expected = np.meshgrid(*arrays, indexing=indexing)
            assert type(got) is tuple and len(got) == len(expected)
            for g, e in zip(got, expected):
                same(g, e)
                assert g.device == xa.device
    assert gk.meshgrid() == ()


def test_meshgrid_copies_and_views(device):
    x, y = on(np.array([1, 2, 3], np.int16), device), on(np.array([4.0, 5.0]), device)
    gx, gy = gk.meshgrid(x, y)
    same(gx, np.meshgrid([1, 2, 3], [4.0, 5.0])[0].astype(np.int16))  # each keeps its dtype
    gx[0, 0] = 9  # a copy: writable, and the input is untouched
    same(x, np.array([1, 2, 3], np.int16))
    same(gx, np.array([[9, 2, 3], [1, 2, 3]], np.int16))
    vx, vy = gk.meshgrid(x, y, copy=False)  # views of the inputs
    same(vx, np.array([[1, 2, 3], [1, 2, 3]], np.int16))
    with pytest.raises(ValueError, match="view of a broadcast"):
        vx += 1
    with pytest.raises(ValueError, match="view of a broadcast"):
        vx[1, 0] = 7  # read-only like its views: NumPy warns this will be refused
    same(x, np.array([1, 2, 3], np.int16))
    # other shapes are flattened; lists follow the first Array's device
    m = on(np.arange(4).reshape(2, 2), device)
    got = gk.meshgrid([1, 2], m, indexing="ij")
    same(got[1], np.meshgrid([1, 2], np.arange(4), indexing="ij")[1])
    assert got[0].device == m.device
    zero_d = on(np.float32(2), device)
    same(gk.meshgrid(zero_d, x)[0], np.meshgrid(np.float32(2), [1, 2, 3])[0])
    same(gk.meshgrid(on(np.zeros(0, np.float32), device), x)[1],
         np.meshgrid(np.zeros(0, np.float32), np.array([1, 2, 3], np.int16))[1])


def test_meshgrid_errors():
    x = gk.asarray([1, 2])
    with pytest.raises(ValueError, match="indexing must be 'xy' or 'ij', not 'yx'"):
        gk.meshgrid(x, x, indexing="yx")
    with pytest.raises(TypeError, match="indexing must be 'xy' or 'ij'"):
        gk.meshgrid(x, indexing=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sparse'"):
        gk.meshgrid(x, sparse=True)
    with pytest.raises(ValueError, match="at most 8 axes"):
        gk.meshgrid(*[x] * 9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu_match_numpy(device, dtype):
    for shape in [(3, 4), (4, 3), (2, 3, 4), (2, 1, 3, 3), (0, 2), (2, 0, 2)]:
        a = sample(dtype, shape, seed=len(shape), low=1, high=9)
        x = on(a, device)
        for k in (0, 1, -1, 2, -3, 10, -10, 2**62, -(2**62)):
            same(gk.tril(x, k=k), np.tril(a, k=k))
            same(gk.triu(x, k=k), np.triu(a, k=k))
    a = sample(dtype, (3, 3), seed=9, low=1, high=9)
    same(gk.tril(on(a, device).T), np.tril(a.T))
    same(gk.triu(on(a, device)[::-1]), np.triu(a[::-1]))


def test_tril_triu_errors(device):
    with pytest.raises(ValueError, match=r"tril: the array has shape \(3,\); it needs at least 2"):
        gk.tril(on(np.ones(3), device))
    with pytest.raises(ValueError, match=r"triu: the array has shape \(\)"):
        gk.triu(on(np.float64(1), device))
    with pytest.raises(TypeError, match="k must be an int"):
        gk.tril(on(np.ones((2, 2)), device), k=0.5)
    with pytest.raises(TypeError, match="at most 1 positional"):
        gk.triu(on(np.ones((2, 2)), device), 1)


# --- tensordot, vecdot ---------------------------------------------------------------

PAIRS = [(d, d) for d in DTYPES] + [("int8", "uint8"), ("int16", "float32"), ("bool", "int32"),
                                    ("uint64", "int64"), ("float32", "float64")]


@pytest.mark.parametrize("dtypes", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_tensordot_matches_numpy(device, dtypes):
    a = sample(dtypes[0], (2, 3, 4), seed=1)
    b = sample(dtypes[1], (4, 3, 5), seed=2)
    x = on(a, device)
    cases = [(a, b, ([1, 2], [1, 0])), (a, b, ((-2, -1), (-2, -3))), (a, b, ([2], [0])),
             (a, b, (2, 0)), (a, b.transpose(1, 0, 2), 0), (a[0], b[0], 0),
             (a, b.transpose(1, 0, 2), 2)]
    for left, right, axes in cases:
        got = gk.tensordot(on(left, device), on(right, device), axes=axes)
        same(got, np.tensordot(left, right, axes=axes), tol={"rtol": 1e-5, "atol": 1e-5})
    same(gk.tensordot(x[:, :, 1:], on(b[1:], device), axes=([2], [0])),
         np.tensordot(a[:, :, 1:], b[1:], axes=([2], [0])), tol={"rtol": 1e-5, "atol": 1e-5})


def test_tensordot_wraps_like_numpy(device):
    a = np.full((2, 8), 100, np.int8)
    same(gk.tensordot(on(a, device), on(a.T, device), axes=1), np.tensordot(a, a.T, axes=1))
    big = np.array([1 << 40, 1 << 41], np.int64)
    same(gk.tensordot(on(big, device), on(big, device), axes=1),
         np.tensordot(big, big, axes=1))


def test_tensordot_zero_d_empty_and_default(device):
    a = sample("float32", (2, 3, 4), seed=1)
    b = sample("float32", (3, 4, 2), seed=2)
    same(gk.tensordot(on(a, device), on(b, device)), np.tensordot(a, b))  # axes=2
    s = np.float32(3)
    same(gk.tensordot(on(s, device), on(b, device), axes=0), np.tensordot(s, b, axes=0))
    e1, e2 = np.zeros((3, 0), np.float64), np.ones((0, 2), np.float64)
    same(gk.tensordot(on(e1, device), on(e2, device), axes=1), np.tensordot(e1, e2, axes=1))
    i1, i2 = np.zeros((3, 0), np.int32), np.ones((0, 2), np.int32)
    same(gk.tensordot(on(i1, device), on(i2, device), axes=1), np.tensordot(i1, i2, axes=1))


def test_tensordot_errors(device):
    x = on(np.ones((2, 3), np.float32), device)
    y = on(np.ones((3, 2), np.float32), device)
    with pytest.raises(ValueError, match="contracted axes must match"):
        gk.tensordot(x, y, axes=([0], [0]))
    with pytest.raises(ValueError, match=r"axes=3, but x1 has shape \(2, 3\)"):
        gk.tensordot(x, y, axes=3)
    with pytest.raises(ValueError, match="axes=-1"):
        gk.tensordot(x, y, axes=-1)
    with pytest.raises(ValueError, match="1 axes of x1 and 2 of x2"):
        gk.tensordot(x, y, axes=([1], [0, 1]))
    with pytest.raises(ValueError, match="listed twice"):
        gk.tensordot(x, x, axes=([1, 1], [0, 1]))
    with pytest.raises(ValueError, match="x2: axis 5 is out of range"):
        gk.tensordot(x, y, axes=([1], [5]))
    with pytest.raises(TypeError, match="pair of sequences"):
        gk.tensordot(x, y, axes="1")
    with pytest.raises(TypeError, match="pair of sequences"):
        gk.tensordot(x, y, axes=([1], [0], [0]))
    with pytest.raises(TypeError, match="axes must be an int"):
        gk.tensordot(x, y, axes=True)
    big = on(np.ones((1,) * 5, np.float32), device)
    with pytest.raises(ValueError, match="would have 10 axes"):
        gk.tensordot(big, big, axes=0)


@pytest.mark.parametrize("dtypes", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_vecdot_matches_numpy(device, dtypes):
    a = sample(dtypes[0], (2, 3, 4), seed=1)
    b = sample(dtypes[1], (3, 4), seed=2)
    x, y = on(a, device), on(b, device)
    same(gk.vecdot(x, y), np.vecdot(a, b))
    same(gk.vecdot(x, y, axis=-2), np.vecdot(a, b, axis=-2))
    same(gk.vecdot(x, y[:, :1], axis=-2), np.vecdot(a, b[:, :1], axis=-2))
    same(gk.vecdot(x, x, axis=1), np.vecdot(a, a, axis=1))
    same(gk.vecdot(y[0], y[1]), np.vecdot(b[0], b[1]))
    same(gk.vecdot(x[:, ::-1], y[::-1]), np.vecdot(a[:, ::-1], b[::-1]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vecdot_of_long_vectors(device, dtype):
    """Real vectors of 32 and more along the last axes are dots on the CPU
    (a row times a column through gk_matmul): batches that broadcast, views,
    empty batches and NaN, against NumPy."""
    a = sample(dtype, (5, 1, 100), seed=3)
    b = sample(dtype, (3, 100), seed=4)
    x, y = on(a, device), on(b, device)
    same(gk.vecdot(x, y), np.vecdot(a, b))
    same(gk.vecdot(y, x), np.vecdot(b, a))
    same(gk.vecdot(x[..., ::-2], y[:, 1::2]), np.vecdot(a[..., ::-2], b[:, 1::2]))
    same(gk.vecdot(y.T, y.T, axis=0), np.vecdot(b.T, b.T, axis=0))  # a strided contraction
    long = sample(dtype, (3000,), seed=5)
    same(gk.vecdot(on(long, device), on(long[::-1], device)), np.vecdot(long, long[::-1]))
    empty = np.zeros((0, 64), dtype)
    same(gk.vecdot(on(empty, device), on(empty, device)), np.vecdot(empty, empty))
    nan = long.copy()
    nan[7] = np.nan
    same(gk.vecdot(on(nan, device), on(long, device)), np.vecdot(nan, long))
    mixed = gk.vecdot(on(long, device), on(long.astype("float32"), device))
    assert mixed.dtype == dtype


def test_vecdot_edges_and_errors(device):
    e = np.zeros((2, 0), np.float32)
    same(gk.vecdot(on(e, device), on(e, device)), np.vecdot(e, e))
    w = np.array([200, 100], np.uint8)
    same(gk.vecdot(on(w, device), on(w, device)), np.vecdot(w, w))  # wraps in uint8
    x = on(np.ones((2, 3), np.float32), device)
    with pytest.raises(ValueError, match="0-d array has no vectors"):
        gk.vecdot(on(np.float32(1), device), x)
    with pytest.raises(ValueError, match="lengths 3 and 2; they must be equal"):
        gk.vecdot(x, on(np.ones(2, np.float32), device))
    with pytest.raises(ValueError, match="does not broadcast"):
        gk.vecdot(x, on(np.ones((1, 3), np.float32), device), axis=0)
    with pytest.raises(ValueError, match=r"axis 2 is out of range for shapes \(2, 3\) and \(2, 3\)"):
        gk.vecdot(x, x, axis=2)
    with pytest.raises(ValueError, match="do not broadcast"):
        gk.vecdot(on(np.ones((2, 3)), device), on(np.ones((4, 3)), device))
    # a non-negative axis of operands of different ndim: NumPy counts it in
    # each, the broadcast shape would name another axis of one of them
    with pytest.raises(ValueError, match="axis 1 of shapes .* is ambiguous"):
        gk.vecdot(on(np.ones((4, 4)), device), on(np.ones((1, 4, 4)), device), axis=1)
    with pytest.raises(ValueError, match="axis 1 of shapes .* is ambiguous"):
        gk.linalg.cross(on(np.ones((3, 3)), device), on(np.ones((1, 3, 3)), device), axis=1)
    with pytest.raises(TypeError, match="axis must be an int"):
        gk.vecdot(x, x, axis=None)


def test_mismatched_devices():
    devices = [str(d) for d in gk.devices()]
    if len(devices) < 2:
        pytest.skip("one device only")
    x = gk.ones((2, 3), device=devices[0])
    y = gk.ones((2, 3), device=devices[1])
    for call in (lambda: gk.vecdot(x, y), lambda: gk.tensordot(x, y, axes=([0], [0])),
                 lambda: gk.meshgrid(x, y), lambda: gk.diff(x, prepend=y[:, :1])):
        with pytest.raises(ValueError, match="device"):
            call()


# --- the statistics and sorting functions in every dtype -------------------------------

SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]


def reference(function, *args, **kwargs):
    """NumPy's result, or the exception type it raises."""
    try:
        return function(*args, **kwargs)
    except (ValueError, TypeError) as error:
        return type(error)


def check_against(got_call, expected):
    if isinstance(expected, type):
        with pytest.raises(expected):
            got_call()
    else:
        same(got_call(), expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's empty means and ddof warnings
@pytest.mark.parametrize("dtype", DTYPES)
def test_statistics_match_numpy_in_every_dtype(device, dtype):
    for shape in SHAPES:
        a = sample(dtype, shape, seed=len(shape))
        x = on(a, device)
        nd = a.ndim
        axes = [None, ()] + list(range(-nd, nd)) + ([(0, nd - 1)] if nd >= 2 else [])
        for name in ("sum", "prod", "max", "min", "mean", "std", "var"):
            for axis in axes:
                for keepdims in (False, True):
                    check_against(lambda: getattr(gk, name)(x, axis=axis, keepdims=keepdims),
                                  reference(getattr(np, name), a, axis=axis, keepdims=keepdims))
        last = -1 if nd else None
        # (negative floats to an unsigned dtype: C leaves the conversion
        # undefined, NumPy gives what the CPU does, gpukit saturates to 0)
        outs = ["int32", "float64", "bool", "float32"] + ([] if a.dtype.kind == "f" else ["uint64"])
        for name in ("sum", "prod"):
            for out in outs:
                check_against(lambda: getattr(gk, name)(x, axis=last, dtype=out),
                              reference(getattr(np, name), a, axis=last, dtype=out))
        for name in ("std", "var"):
            for correction in (1, 0.5, 2):
                check_against(lambda: getattr(gk, name)(x, correction=correction),
                              reference(getattr(np, name), a, ddof=correction))
        for name in ("argmax", "argmin"):
            for axis in [None] + list(range(-nd, nd)):
                for keepdims in (False, True):
                    check_against(lambda: getattr(gk, name)(x, axis=axis, keepdims=keepdims),
                                  reference(getattr(np, name), a, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sorting_matches_numpy_in_every_dtype(device, dtype):
    for shape in SHAPES[1:]:  # 0-d arrays sort to themselves (PyTorch's rule; NumPy raises)
        a = sample(dtype, shape, seed=len(shape), low=-3, high=3)  # many ties
        x = on(a, device)
        for axis in range(-a.ndim, a.ndim):
            n = a.shape[axis]
            flipped = np.flip(a, axis=axis)
            for stable in (True, False):
                same(gk.sort(x, axis=axis, stable=stable), np.sort(a, axis=axis, stable=True))
                same(gk.argsort(x, axis=axis, stable=stable), np.argsort(a, axis=axis, stable=True))
                # descending and stable: equal elements keep their order
                same(gk.sort(x, axis=axis, descending=True, stable=stable),
                     np.flip(np.sort(flipped, axis=axis, stable=True), axis=axis))
                same(gk.argsort(x, axis=axis, descending=True, stable=stable),
                     np.flip(n - 1 - np.argsort(flipped, axis=axis, stable=True), axis=axis))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint16"])
def test_long_rows_sort_as_numpy(device, dtype):
    # Rows long enough (2^16 and more) that the CPU radix sorts each on all
    # its threads when there are fewer rows than threads: one row, and two
    # rows of a 2-d array, with many ties, both zeros and NaNs, argsort
    # stable both ways
    rng = np.random.default_rng(12)
    n = (1 << 16) + 7
    if dtype[0] == "f":
        a = rng.integers(-300, 300, n).astype(dtype) / 8
        a[rng.integers(0, n, 50)] = np.nan
        a[rng.integers(0, n, 50)] = -0.0
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, int(info.max) + 1, n).astype(dtype)
    for rows in (a, np.stack([a, a[::-1]])):
        x = on(rows, device)
        same(gk.sort(x), np.sort(rows, stable=True))
        same(gk.argsort(x), np.argsort(rows, stable=True))
        same(gk.argsort(x, descending=True),
             np.flip(n - 1 - np.argsort(np.flip(rows, axis=-1), axis=-1, stable=True), axis=-1))


def test_sorting_and_argmax_with_nans(device):
    a = np.array([[2.0, np.nan, -1.0, np.nan, 0.0], [1.0, 1.0, -0.0, 0.0, 3.0]])
    x = on(a, device)
    same(gk.sort(x), np.sort(a))
    same(gk.argsort(x), np.argsort(a, stable=True))
    for name in ("argmax", "argmin", "max", "min"):
        same(getattr(gk, name)(x, axis=1), getattr(np, name)(a, axis=1))


# --- signatures ---------------------------------------------------------------------

SIGNATURES = {
    "meshgrid": "(*arrays, indexing='xy', copy=True)",
    "tril": "(x, /, *, k=0)",
    "triu": "(x, /, *, k=0)",
    "tensordot": "(x1, x2, /, *, axes=2)",
    "vecdot": "(x1, x2, /, *, axis=-1)",
    "cumulative_prod": "(x, /, *, axis=None, dtype=None, include_initial=False)",
    "cumulative_sum": "(x, /, *, axis=None, dtype=None, include_initial=False)",
    "all": "(x, /, *, axis=None, keepdims=False)",
    "any": "(x, /, *, axis=None, keepdims=False)",
    "diff": "(x, /, *, axis=-1, n=1, prepend=None, append=None)",
    "sum": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "prod": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "max": "(x, /, *, axis=None, keepdims=False)",
    "min": "(x, /, *, axis=None, keepdims=False)",
    "mean": "(x, /, *, axis=None, keepdims=False)",
    "argmax": "(x, /, *, axis=None, keepdims=False)",
    "argmin": "(x, /, *, axis=None, keepdims=False)",
    "sort": "(x, /, *, axis=-1, descending=False, stable=True)",
    "argsort": "(x, /, *, axis=-1, descending=False, stable=True)",
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_standard_signatures(name):
    function = getattr(gk, name)
    assert str(inspect.signature(function)) == SIGNATURES[name]
    assert function.__doc__ and len(function.__doc__) > 40


def test_var_std_signatures():
    # the standard's correction, and NumPy's ddof beside it
    for name in ("var", "std"):
        assert str(inspect.signature(getattr(gk, name))) == \
            "(x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None)"


# --- nothing leaks -------------------------------------------------------------------

def test_utility_functions_do_not_leak():
    """Each function, and each of its error paths, 10**4 times (test_leaks's
    check: RSS, reference counts, gc-tracked objects)."""
    from test_leaks import ROUNDS, assert_no_leak

    m = gk.asarray([[1.0, 2.0, 3.0], [4.0, 0.0, 6.0]])
    v = gk.asarray([1, 2, 3], dtype="int32")
    w = [4.0, 5.0]
    cases = [
        (ValueError, lambda: gk.meshgrid(v, indexing="yx")),
        (ValueError, lambda: gk.tril(v)),
        (ValueError, lambda: gk.tensordot(m, m, axes=([0], [1]))),
        (TypeError, lambda: gk.tensordot(m, m, axes="x")),
        (ValueError, lambda: gk.vecdot(m, w)),
        (ValueError, lambda: gk.cumulative_prod(m)),
        (ValueError, lambda: gk.all(m, axis=(0, 0))),
        (ValueError, lambda: gk.diff(m, prepend=v)),
        (OverflowError, lambda: gk.diff(v, prepend=2**40)),
    ]

    def body():
        gk.meshgrid(v, w)
        gk.meshgrid(v, w, indexing="ij", copy=False)
        gk.tril(m, k=1)
        gk.triu(m)
        gk.tensordot(m, m, axes=([1], [1]))
        gk.tensordot(v, v, axes=0)
        gk.vecdot(m, m)
        gk.cumulative_prod(v, include_initial=True, dtype="int16")
        gk.all(m, axis=(0, 1))
        gk.any(m, axis=0, keepdims=True)
        gk.diff(m, n=2, prepend=0.5, append=m[:, :1])
        for error, call in cases:
            try:
                call()
            except error:
                pass
            else:
                raise AssertionError("expected an error")

    assert_no_leak(body, ROUNDS // 10, [m, v, w])
