"""gpukit.Array: attributes, operators (with NumPy 2's promotion, which
array.h documents), basic indexing and assignment, conversions and the
type's protocols, on every device, against NumPy."""
import copy
import operator
import os
import pickle
import shutil
import subprocess
import threading
import weakref

import numpy as np
import pytest

import gpukit as gk
from conftest import host

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
ARITHMETIC = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "truediv": operator.truediv, "pow": operator.pow}
COMPARISONS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
               "gt": operator.gt, "ge": operator.ge}
OPS = {**ARITHMETIC, **COMPARISONS}


def promote(a, b):
    return str(np.result_type(a, b))


def is_float(dtype):
    return dtype.startswith("float")


def scalar_dtype(array_dtype, value):
    """The dtype a Python number counts as beside an array (weak, as in NumPy
    2): the array's unless the number is of a higher kind."""
    if isinstance(value, bool):
        return array_dtype
    if isinstance(value, int):
        return "int64" if array_dtype == "bool" else array_dtype
    return array_dtype if is_float(array_dtype) else "float64"


def result_dtype(name, a, b):
    """(compute dtype, result dtype) of a binary op."""
    compute = promote(a, b)
    if name == "truediv" and not is_float(compute):
        compute = "float64"
    return compute, "bool" if name in COMPARISONS else compute


def refused(name, a, b):
    """Ops array.h calls errors: sub and pow of two bools."""
    return name in ("sub", "pow") and a == "bool" and b == "bool"


def sample(rng, dtype, shape, low=0, high=5):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(low, high, shape).astype(dtype)


def expect(name, na, nb, compute, result):
    with np.errstate(all="ignore"):
        return OPS[name](np.asarray(na).astype(compute), np.asarray(nb).astype(compute)) \
            .astype(result)


def assert_same(x, expected, dtype):
    assert x.dtype == dtype, (x.dtype, dtype)
    assert x.shape == np.shape(expected)
    if is_float(dtype):
        np.testing.assert_allclose(host(x), expected, rtol=2e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(host(x), expected)


# --- attributes -------------------------------------------------------------

def test_attributes_match_numpy(device):
    nx = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = gk.asarray(nx, device=device)
    assert (x.shape, x.ndim, x.size, x.nbytes, x.itemsize) == \
        (nx.shape, nx.ndim, nx.size, nx.nbytes, nx.itemsize)
    assert x.strides == nx.strides
    assert x.dtype == gk.float32 and x.dtype == "float32" and x.dtype == np.float32
    assert isinstance(x.device, gk.device) and x.device == device
    for view, nview in [(x.T, nx.T), (x.mT, np.swapaxes(nx, -1, -2)),
                        (x[:, ::-1, ::2], nx[:, ::-1, ::2]), (x[1, None, :, 3], nx[1, None, :, 3])]:
        assert view.shape == nview.shape
        # (the stride of an axis of length 1 is arbitrary: NumPy gives new axes 0)
        assert [s for s, n in zip(view.strides, view.shape) if n > 1] == \
            [s for s, n in zip(nview.strides, nview.shape) if n > 1]
        np.testing.assert_array_equal(host(view), nview)
    assert gk.asarray(5, device=device).T.shape == ()
    with pytest.raises(ValueError):
        gk.zeros(3, device=device).mT
    with pytest.raises(AttributeError):
        x.shape = (4, 6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_itemsize_and_dtype_attributes(device, dtype):
    x = gk.zeros((2, 5), dtype=dtype, device=device)
    assert x.itemsize == np.dtype(dtype).itemsize
    assert x.nbytes == 10 * x.itemsize
    assert x.dtype == dtype and str(x.dtype) == dtype


# --- binary operators -------------------------------------------------------

@pytest.mark.parametrize("b_dtype", DTYPES)
@pytest.mark.parametrize("a_dtype", DTYPES)
def test_binary_operators_between_arrays(device, a_dtype, b_dtype):
    rng = np.random.default_rng(DTYPES.index(a_dtype) * 7 + DTYPES.index(b_dtype))
    na = sample(rng, a_dtype, (3, 4))
    nb = sample(rng, b_dtype, (4,), low=1, high=4)  # broadcast; no zero divisors
    a, b = gk.asarray(na, device=device), gk.asarray(nb, device=device)
    for name, op in OPS.items():
        if refused(name, a_dtype, b_dtype):
            with pytest.raises(TypeError):
                op(a, b)
            continue
        compute, result = result_dtype(name, a_dtype, b_dtype)
        assert_same(op(a, b), expect(name, na, nb, compute, result), result)
        assert_same(op(b, a), expect(name, nb, na, compute, result), result)


@pytest.mark.parametrize("value", [True, 2, 3.5, 0.5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_operators_with_python_scalars(device, dtype, value):
    rng = np.random.default_rng(DTYPES.index(dtype))
    na = sample(rng, dtype, (2, 3), low=1, high=4)
    a = gk.asarray(na, device=device)
    sd = scalar_dtype(dtype, value)
    for name, op in OPS.items():
        if refused(name, dtype, sd):
            with pytest.raises(TypeError):
                op(a, value)
            continue
        compute, result = result_dtype(name, dtype, sd)
        assert_same(op(a, value), expect(name, na, value, compute, result), result)
        # Reflected: value OP a (Python tries a's __rsub__ etc.).
        assert_same(op(value, a), expect(name, value, na, compute, result), result)


def test_python_scalars_are_weak(device):
    def dt(x):
        return str(x.dtype)
    i32 = gk.asarray([1, 2], dtype="int32", device=device)
    f32 = gk.asarray([1.0, 2.0], device=device)
    assert dt(i32 + 2) == "int32" and dt(2 * i32) == "int32"
    assert dt(i32 + 2.5) == "float64" and dt(i32 / 2) == "float64"
    assert dt(f32 * 2.0) == "float32"
    assert dt(f32 * np.float64(2.0)) == "float64"  # a NumPy scalar has its dtype
    assert dt(gk.asarray([True], device=device) + 1) == "int64"
    assert dt(i32 + True) == "int32"
    assert dt(gk.asarray([1], dtype="int8", device=device) + 2.5) == "float64"
    u8 = gk.asarray([250], dtype="uint8", device=device)
    assert (u8 + 10).tolist() == [4]  # integers wrap
    for bad in (300, -1, 2 ** 70):
        with pytest.raises(OverflowError):
            u8 + bad
    assert (i32 < 2 ** 40).tolist() == [True] * len(i32.tolist())  # by value, as NumPy 2
    u64 = gk.asarray([1], dtype="uint64", device=device)
    assert (u64 + (2 ** 64 - 2)).tolist() == [2 ** 64 - 1]  # exact beyond 2^53


def test_int_pow_and_true_division(device):
    a = gk.asarray([2, 3, -2], dtype="int64", device=device)
    assert (a ** 3).tolist() == [8, 27, -8]
    assert (2 ** gk.asarray([0, 10], device=device)).tolist() == [1, 1024]
    assert_same(a / 2, np.array([1, 1.5, -1]), "float64")
    assert_same(7 / gk.asarray([2, 4], device=device), np.array([3.5, 1.75]), "float64")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_square_and_reciprocal_powers_are_exact(device, dtype):
    # x ** 2 is x * x and x ** -1 is 1 / x, bit for bit (NumPy's square and
    # reciprocal): one rounding, where pow's libraries are 1 ULP off now and
    # then and far off in the subnormals. The special values are pow's.
    rng = np.random.default_rng(7)
    tiny = np.finfo(dtype).tiny
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, tiny / 4, 1.0, -1.0]
    scales = 10.0 ** rng.integers(-40, 40, 2000)
    a = np.concatenate([special, rng.standard_normal(2000) * scales])
    with np.errstate(all="ignore"):
        a = a.astype(dtype)
        x = gk.asarray(a, device=device)
        for exponent, expected in ((2, a * a), (2.0, a * a), (-1, 1 / a), (-1.0, 1 / a)):
            got = (x ** exponent).cpu().numpy()
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, expected, strict=True, err_msg=str(exponent))
            assert np.array_equal(np.signbit(got), np.signbit(expected))
        # gk.pow takes the same path; 2 ** x and 3 stay pow's
        np.testing.assert_array_equal(gk.pow(x, 2).cpu().numpy(), a * a)
        assert (x ** 3).dtype == dtype and (2.0 ** x).dtype == dtype


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_integer_squares_wrap_as_numpy(device, dtype):
    # x ** 2 of integers is x * x (the power's wrapping, NumPy's square);
    # an exponent beyond the dtype is still NumPy's OverflowError.
    info = np.iinfo(dtype)
    a = np.array([0, 1, 3, 100, info.max, info.min, info.max // 2], dtype=dtype)
    with np.errstate(over="ignore"):
        expected = a ** 2
    got = gk.asarray(a, device=device) ** 2
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.cpu().numpy(), expected)
    with pytest.raises(OverflowError):
        gk.asarray(a, device=device) ** (int(info.max) + 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_half_powers(device, dtype):
    # x ** 0.5 is the square root, with pow's special values where the
    # standard gives them: (-0) ** 0.5 is +0, (-inf) ** 0.5 is +inf. On
    # every device it is the correctly rounded sqrt, in every lane whose
    # exponent is 0.5 whatever the other lanes hold (an element never
    # depends on its neighbours), as 2 and -1 are x * x and 1 / x there, in
    # place too (a GPU's pow may be 1 ULP off).
    rng = np.random.default_rng(8)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, np.finfo(dtype).tiny / 8, 4.0]
    a = np.concatenate([special, rng.uniform(0, 1e6, 997)]).astype(dtype)
    with np.errstate(invalid="ignore"):
        expected = np.sqrt(a)
    expected[1], expected[3] = 0.0, np.inf
    x = gk.asarray(a, device=device)
    got = (x ** 0.5).cpu().numpy()
    assert np.array_equal(np.signbit(got[:5]), np.signbit(expected[:5]))
    np.testing.assert_array_equal(got, expected, strict=True)
    # lanes of 0.5, 2 and -1 among others in one array, and in place (on a
    # GPU the pow kernel itself, not the core's x * x): the same on every
    # device
    exponents = rng.choice([0.5, 2, -1, 2.5], a.size).astype(dtype)
    mixed = gk.pow(x, gk.asarray(exponents, device=device)).cpu().numpy()
    with np.errstate(all="ignore"):
        for exponent, want in ((0.5, expected), (2, a * a), (-1, 1 / a)):
            lanes = exponents == exponent
            np.testing.assert_array_equal(mixed[lanes], want[lanes], err_msg=str(exponent))
            inplace = gk.asarray(a.copy(), device=device)
            inplace **= exponent
            np.testing.assert_array_equal(inplace.cpu().numpy(), want, err_msg=str(exponent))
        others = exponents == 2.5
        np.testing.assert_allclose(mixed[others], a[others] ** 2.5, rtol=1e-6)


def test_elementwise_results_keep_their_operands_memory_order(device):
    # NumPy's order='K': a result's axes lie in memory as its operands' do
    # when they agree (exp or astype of a transposed array is transposed,
    # and runs as one contiguous loop), C order when they disagree or are
    # broadcast.
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 3, 4, 5))
    x, y = gk.asarray(a, device=device), gk.asarray(b, device=device)
    cond = a > 0
    c = gk.asarray(cond, device=device)
    order = (2, 0, 1)

    def dense(m, v):  # v (C order) as an operand of module m
        return v if m is np else gk.asarray(v, device=device)

    cases = [  # (the result with module m, p permuting an array; what it is)
        (lambda m, p: m.exp(p(a if m is np else x)), "exp of a permuted array"),
        (lambda m, p: p(a if m is np else x) * 2, "times a value"),
        (lambda m, p: p(a if m is np else x) + p(b if m is np else y), "two agreeing"),
        (lambda m, p: p(a if m is np else x) + dense(m, np.ascontiguousarray(p(b))),
         "two disagreeing"),
        (lambda m, p: p(a if m is np else x)[:, ::-1] - 1, "reversed"),
        (lambda m, p: m.clip(p(a if m is np else x), -0.5, 0.5), "clip"),
        (lambda m, p: m.where(p(cond if m is np else c), p(a if m is np else x), 0.0),
         "where"),
        (lambda m, p: p(a if m is np else x).astype(m.float32), "astype"),
    ]
    for make, what in cases:
        want = make(np, lambda v: v.transpose(order))
        got = make(gk, lambda v: gk.permute_dims(v, order))
        assert got.strides == want.strides, what
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-12, err_msg=what)
    # a broadcast operand does not decide; the one that spans does
    col = gk.asarray(b[:, :1], device=device)
    assert (x.T + col.T).strides == (a.T + b[:, :1].T).strides
    # writing through a transposed view, and in place, still lands right
    z = gk.asarray(a.copy(), device=device)
    z.T[...] = y.T
    z.T[...] += 1
    np.testing.assert_array_equal(z.cpu().numpy(), b + 1)


def test_operands_that_are_array_likes(device):
    x = gk.asarray([1.0, 2.0, 3.0], device=device)
    for other in ([1, 2, 3], (1, 2, 3), np.array([1, 2, 3], dtype=np.float32)):
        y = x + other
        assert type(y) is gk.Array and y.device == device
        assert y.tolist() == [2.0, 4.0, 6.0]
    y = [1, 2, 3] - x
    assert type(y) is gk.Array and y.tolist() == [0.0, 0.0, 0.0]
    z = np.ones(3, dtype=np.float32) + x  # NumPy defers to the Array
    assert type(z) is gk.Array and z.device == device and z.tolist() == [2.0, 3.0, 4.0]
    assert (x + np.ones(3)).dtype == "float64"  # two arrays promote normally
    with pytest.raises(ValueError):
        x + [1, 2]


def test_operators_gpukit_does_not_have(device):
    x = gk.asarray([1, 2], device=device)
    assert (x == "abc") is False
    assert (x != "abc") is True
    assert (x == None) is False  # noqa: E711
    # The integer operators exist (test_elementwise_api.py); what is not an
    # array is still left to Python, and floats refuse the bitwise ones.
    for op in (operator.floordiv, operator.mod, operator.and_, operator.or_, operator.xor,
               operator.lshift, operator.rshift, operator.add):
        with pytest.raises(TypeError):
            op(x, "abc")
        with pytest.raises(TypeError):
            op(x, None)
    f = gk.asarray([1.5, 2.0], device=device)
    for op in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
        with pytest.raises(TypeError):
            op(f, f)
    with pytest.raises(TypeError):
        ~f
    with pytest.raises(TypeError):
        pow(x, 2, 3)


def test_mixing_devices_is_a_value_error():
    others = [str(d) for d in gk.devices() if str(d) != "cpu"]
    if not others:
        pytest.skip("only the CPU here")
    a, b = gk.ones(3), gk.ones(3, device=others[0])
    for op in (operator.add, operator.mul, operator.lt, operator.matmul):
        with pytest.raises(ValueError):
            op(a, b)
    with pytest.raises(ValueError):
        a += b
    with pytest.raises(ValueError):
        a[:] = b


# --- in-place operators ------------------------------------------------------

def kind(dtype):
    return 0 if dtype == "bool" else 2 if is_float(dtype) else 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_operators(device, dtype):
    rng = np.random.default_rng(1)
    na = sample(rng, dtype, (3, 4), low=1, high=4)
    nb = sample(rng, dtype, (4,), low=1, high=3)
    for name, iop in OPS_INPLACE.items():
        for other, other_dtype in ((nb, dtype), (2, scalar_dtype(dtype, 2)),
                                   (nb.astype(np.float64), "float64"),
                                   (nb.astype(np.int64), "int64")):
            x = gk.asarray(na, device=device, copy=True)  # (na itself stays as it is)
            before = x
            operand = gk.asarray(other, device=device) if isinstance(other, np.ndarray) else other
            compute, result = result_dtype(name, dtype, other_dtype)
            if refused(name, dtype, other_dtype) or kind(result) > kind(dtype):
                # NumPy's same_kind rule: int32 += 1.5 and int32 /= 2 are TypeErrors
                # (NumPy's UFuncTypeError); so is an op not defined for the dtype
                with pytest.raises(TypeError):
                    x = iop(x, operand)
                np.testing.assert_array_equal(host(before), na)  # untouched
                continue
            x = iop(x, operand)
            assert x is before
            other_np = np.asarray(other, dtype=other_dtype)
            assert_same(x, expect(name, na, other_np, compute, dtype), dtype)


OPS_INPLACE = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
               "truediv": operator.itruediv, "pow": operator.ipow}


def test_inplace_on_views_and_with_lists(device):
    x = gk.zeros(6, dtype="int32", device=device)
    v = x[::2]
    v += 1
    assert x.tolist() == [1, 0, 1, 0, 1, 0]
    x[1::2] -= [1, 2, 3]  # int64 elements, int32 result (NumPy's same_kind)
    assert x.tolist() == [1, -1, 1, -2, 1, -3]
    assert x.dtype == "int32"
    with pytest.raises(TypeError, match="same_kind"):
        x += 1.5  # would need float64
    with pytest.raises(TypeError, match="same_kind"):
        x //= 1.5
    with pytest.raises(ValueError):
        x += gk.ones((2, 6), dtype="int32", device=device)  # would change the shape
    m = gk.asarray(np.eye(3, dtype=np.float32) * 2, device=device)
    before = m
    m @= gk.asarray(np.full((3, 3), 1.0, dtype=np.float32), device=device)
    assert m is before
    np.testing.assert_allclose(host(m), np.full((3, 3), 2.0))
    with pytest.raises(ValueError):
        m @= gk.ones((3, 2), device=device)


# --- unary operators and matmul ------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_operators(device, dtype):
    na = sample(np.random.default_rng(2), dtype, (5,), low=-3, high=4)
    x = gk.asarray(na, device=device, copy=True)
    if dtype == "bool":
        with pytest.raises(TypeError):  # NumPy's, for -x and +x of bools
            -x
        with pytest.raises(TypeError):
            +x
    else:
        with np.errstate(all="ignore"):
            assert_same(-x, -na, dtype)
        y = +x
        assert y is not x
        assert_same(y, na, dtype)
    assert_same(abs(x), np.abs(na), dtype)


def test_matmul(device):
    rng = np.random.default_rng(3)
    na, nb = rng.random((3, 4), dtype=np.float32), rng.random((4, 2), dtype=np.float32)
    a, b = gk.asarray(na, device=device), gk.asarray(nb, device=device)
    np.testing.assert_allclose(host(a @ b), na @ nb, rtol=1e-5)
    np.testing.assert_allclose(host(a[0] @ b), na[0] @ nb, rtol=1e-5)
    batch = rng.random((2, 3, 4), dtype=np.float32)
    np.testing.assert_allclose(host(gk.asarray(batch, device=device) @ b), batch @ nb, rtol=1e-5)
    np.testing.assert_allclose(host(a @ nb.tolist()), na @ nb, rtol=1e-5)
    with pytest.raises(TypeError):
        a @ 2
    with pytest.raises(TypeError):
        2 @ a
    with pytest.raises(ValueError):
        a @ a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_vector_products(device, dtype):
    # matrix @ vector and vector @ matrix (GEMV on the CPU), non-square,
    # batched on either side, views made dense first, and 1 x k and k x 1
    # matrices, against NumPy
    rng = np.random.default_rng(4)
    m, v, w = rng.random((5, 7)), rng.random(7), rng.random(5)
    stack = rng.random((3, 5, 7))
    cases = [(m, v), (w, m), (stack, v), (w, stack), (m.T, w), (v, m.T), (m[:, ::2], v[::2]),
             (m[:1], v), (w, m[:, :1]), (m, v[:, None]), (w[None], m)]
    for na, nb in cases:
        na, nb = na.astype(dtype), nb.astype(dtype)
        got = gk.asarray(na, device=device) @ gk.asarray(nb, device=device)
        want = na @ nb
        assert got.shape == want.shape and got.dtype == dtype
        np.testing.assert_allclose(host(got), want, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("a_dtype,b_dtype", [("int64", "uint32"), ("int8", "int8"),
                                             ("uint8", "int16"), ("bool", "bool"),
                                             ("int32", "float32")])
def test_matmul_keeps_the_promoted_dtype(device, a_dtype, b_dtype):
    """Integer and bool products are the dtype's own arithmetic (wrapping
    like NumPy's), over batches and 1-d operands, not float64."""
    rng = np.random.default_rng(5)
    def draw(shape, dtype):
        if dtype == "bool":
            return rng.random(shape) < 0.5
        info = np.iinfo(dtype) if dtype[0] in "iu" else None
        low, high = (max(info.min, -200), min(info.max, 200)) if info else (-5, 5)
        return rng.integers(low, high, shape).astype(dtype)
    for sa, sb in [((3, 4), (4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3)),
                   ((5, 1, 3, 4), (2, 4, 6)), ((3,), (3,)), ((0, 3), (3, 2)), ((3, 0), (0, 2))]:
        na, nb = draw(sa, a_dtype), draw(sb, b_dtype)
        result = gk.asarray(na, device=device) @ gk.asarray(nb, device=device)
        expected = na @ nb
        assert str(result.dtype) == str(expected.dtype), (sa, sb)
        np.testing.assert_allclose(host(result), expected, rtol=1e-6)
    big = np.array([[2**40, 3], [5, 7]], dtype=np.int64)  # beyond float64's exact integers
    assert np.array_equal(host(gk.asarray(big, device=device) @ gk.asarray(big, device=device)),
                          big @ big)


# --- indexing -------------------------------------------------------------------

def random_key(rng, shape):
    """A random basic index for `shape`: ints (negative too), slices with
    any steps, None and at most one Ellipsis; sometimes fewer items than
    axes, sometimes not a tuple."""
    items = []
    axes = list(shape)
    ellipsis_used = False
    while axes:
        choice = rng.integers(0, 10)
        if choice == 0:
            items.append(None)
            continue
        if choice == 1 and not ellipsis_used:
            ellipsis_used = True
            skip = int(rng.integers(0, len(axes) + 1))
            items.append(Ellipsis)
            axes = axes[skip:]  # the ellipsis covers these; the items after it the rest
            continue
        n = axes.pop(0)
        if choice <= 4 and n > 0:
            items.append(int(rng.integers(-n, n)))
        else:
            def bound():
                return None if rng.integers(0, 3) == 0 else int(rng.integers(-n - 2, n + 3))
            step = [None, 1, 2, 3, -1, -2, -3][rng.integers(0, 7)]
            items.append(slice(bound(), bound(), step))
        if rng.integers(0, 6) == 0 and not ellipsis_used:
            break  # the remaining axes stay whole
    if len(items) == 1 and rng.integers(0, 2) == 0:
        return items[0]
    return tuple(items)


SHAPES = [(5,), (3, 4), (2, 3, 4), (4, 1, 3), (0, 3), (2, 2, 2, 3), (6, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_getitem_matches_numpy(device, shape):
    rng = np.random.default_rng(len(shape) * 10 + shape[0])
    nx = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = gk.asarray(nx, device=device)
    for _ in range(40):
        key = random_key(rng, shape)
        try:
            expected = np.asarray(nx[key])
        except IndexError:
            with pytest.raises(IndexError):
                x[key]
            continue
        got = x[key]
        assert got.shape == expected.shape, key
        np.testing.assert_array_equal(host(got), expected, err_msg=str(key))


@pytest.mark.parametrize("shape", SHAPES)
def test_setitem_matches_numpy(device, shape):
    rng = np.random.default_rng(len(shape) * 10 + shape[0] + 1)
    nx = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = gk.asarray(nx, device=device)
    for i in range(30):
        key = random_key(rng, shape)
        try:
            target_shape = np.asarray(nx[key]).shape
        except IndexError:
            with pytest.raises(IndexError):
                x[key] = 1
            continue
        if i % 3 == 0:
            value = float(rng.integers(-9, 9)) + 0.25
        elif i % 3 == 1:
            value = rng.random(target_shape)  # a NumPy array
        else:
            value = gk.asarray(rng.random(target_shape[1:]), device=device)  # broadcast
        nx[key] = value if not isinstance(value, gk.Array) else host(value)
        x[key] = value
        np.testing.assert_array_equal(host(x), nx, err_msg=str(key))


def test_getitem_returns_views(device):
    x = gk.zeros((4, 5), dtype="int64", device=device)
    nx = np.zeros((4, 5), dtype=np.int64)
    for key in [(1,), (slice(None), 2), (slice(None, None, -2), None, slice(1, 4)),
                (Ellipsis, -1), (2, 3), (None, Ellipsis)]:
        v = x[key]
        v[...] = 7
        nx[key] = 7
        np.testing.assert_array_equal(host(x), nx)


def test_full_integer_index_gives_0d_array(device):
    x = gk.asarray([[1, 2], [3, 4]], device=device)
    y = x[1, -1]
    assert type(y) is gk.Array and y.shape == () and y.item() == 4
    assert x[gk.asarray(1, device=device)].tolist() == [3, 4]  # 0-d int arrays index
    assert x[np.int64(0), np.int32(1)].item() == 2
    z = gk.asarray(5, device=device)
    assert z[()].item() == 5 and z[...].shape == () and z[None].shape == (1,)


def test_0d_bool_index_is_a_new_axis_and_a_mask(device):
    """NumPy's rule: x[True] is x[None], x[False] is empty along a new axis,
    anywhere in a tuple; assignment through it too."""
    nx = np.arange(6).reshape(2, 3)
    for key in [True, False, np.True_, (0, True), (Ellipsis, False), (True, slice(1, None)),
                (None, True, 1)]:
        for form in (key, gk.asarray(key, device=device) if isinstance(key, bool) else key):
            x = gk.asarray(nx, device=device)
            assert np.array_equal(host(x[form]), nx[key]), key
            assert x[form].shape == nx[key].shape, key
            y, ny = gk.asarray(nx, device=device), nx.copy()
            y[form] = 9
            ny[key] = 9
            assert np.array_equal(host(y), ny), key
    z = gk.asarray(2.5, device=device)
    assert z[True].shape == (1,) and z[False].shape == (0,)


def test_to_device(device):
    x = gk.asarray([1.5, 2.5], device=device)
    assert x.to_device(device) is x
    y = x.to_device("cpu")
    assert str(y.device) == "cpu" and y.tolist() == [1.5, 2.5]
    assert x.to_device(device, stream=None) is x
    with pytest.raises(ValueError, match="stream"):
        x.to_device(device, stream=1)
    with pytest.raises(ValueError):
        x.to_device("nowhere:7")


def test_index_errors(device):
    x = gk.zeros((3, 4), device=device)
    for key in [3, -4, (0, 4), (0, -5), (0, 0, 0), (Ellipsis, Ellipsis), 1.5, "a",
                [0, 4], ([0], [-5]), gk.asarray([True, False], device=device),
                gk.asarray(1.0, device=device), gk.asarray([0.5], device=device),
                np.array([0, 9])]:
        with pytest.raises(IndexError):
            x[key]
        with pytest.raises(IndexError):
            x[key] = 1
    with pytest.raises(ValueError):
        x[::0]


def test_advanced_index_errors_are_numpys(device):
    """A bool mask beside other items must have the lengths of the axes it
    covers (an axis of length 0 stands for any), and index arrays must
    broadcast together: NumPy's IndexError, reading and writing, where a
    short mask was taken and a mismatch raised an arithmetic ValueError."""
    x = gk.zeros((2, 1, 2), device=device)
    ints, short = np.array([[1, -1], [0, 1]]), np.array([True])
    for key in [(ints, Ellipsis, short), (slice(None), slice(None), short),
                (np.array([0, 1]), np.array([0, 0, 0])), (np.array([1, 0]), np.array([], bool))]:
        with pytest.raises(IndexError, match="mask must be as long|shape mismatch"):
            x[key]
        with pytest.raises(IndexError, match="mask must be as long|shape mismatch"):
            x[key] = 1
    # a mask's axis of length 0 selects nothing from an axis of any length
    assert x[:, :, np.zeros(0, bool)].shape == np.zeros((2, 1, 2))[:, :, np.zeros(0, bool)].shape
    y = gk.zeros((2, 3), device=device)
    assert y[np.zeros((0, 3), bool)].shape == (0,)


def test_empty_views_are_written(device):
    # NumPy gives empty arrays zero strides; a slice of one is still no
    # broadcast view, and writing its no elements is allowed
    x = gk.asarray(np.zeros((2, 0), np.int32), device=device)
    x[-4:4] = np.zeros((2, 0), np.int32)
    x[::2, :] = 1
    assert x.shape == (2, 0)


def test_axes_out_of_range_raise_axis_error(device):
    """NumPy's AxisError, a ValueError and an IndexError, from every function
    that takes an axis, whichever of the two the caller catches (before,
    some raised ValueError and others IndexError)."""
    assert issubclass(gk.AxisError, ValueError) and issubclass(gk.AxisError, IndexError)
    x = gk.zeros((2, 3), device=device)
    calls = [lambda: gk.sum(x, axis=2), lambda: gk.cumulative_sum(x, axis=-3),
             lambda: gk.sort(x, axis=2), lambda: gk.concat([x, x], axis=2),
             lambda: gk.stack([x, x], axis=4), lambda: gk.expand_dims(x, axis=4),
             lambda: gk.permute_dims(x, (0, 2)), lambda: x.transpose(0, 3),
             lambda: gk.unstack(x, axis=2),
             lambda: gk.take(x, gk.asarray([0], device=device), axis=2),
             lambda: gk.diff(x, axis=2), lambda: gk.vecdot(x, x, axis=2),
             lambda: gk.linalg.cross(x, x, axis=3), lambda: gk.all(x, axis=2),
             lambda: gk.fft.fft(x, axis=2), lambda: gk.fft.fftn(x, axes=(0, 9)),
             lambda: gk.flip(x, axis=2), lambda: gk.squeeze(x, axis=2)]
    for call in calls:
        with pytest.raises(gk.AxisError, match="axis"):
            call()


def test_setitem_conversions_and_errors(device):
    x = gk.zeros(3, dtype="int32", device=device)
    x[0] = 2.9  # truncates, as NumPy
    x[1] = True
    assert x.tolist() == [2, 1, 0]
    with pytest.raises(OverflowError):
        x[0] = 2 ** 40
    with pytest.raises(TypeError):
        x[0] = "a"
    with pytest.raises(TypeError):
        del x[0]
    with pytest.raises(ValueError):
        x[:] = [1, 2]
    f = gk.zeros(2, dtype="float64", device=device)
    f[:] = [0.1, 0.2]  # converted to float64 directly, no float32 step
    assert f.tolist() == [0.1, 0.2]
    y = gk.arange(5, device=device)
    y[1:] = y[:-1]  # overlapping: read before written
    assert y.tolist() == [0, 0, 1, 2, 3]
    # complex values into a real array: the TypeError of a Python complex,
    # from an Array or NumPy too (not the imaginary parts dropped silently)
    for value in (1 + 2j, gk.asarray(1 + 2j, device=device), np.complex64(1 + 2j),
                  np.array([1 + 2j, 3j])):
        with pytest.raises(TypeError, match="complex"):
            f[:] = value
    assert f.tolist() == [0.1, 0.2]
    # an empty list indexes nothing (NumPy's), for reading and writing
    m = gk.reshape(gk.arange(6.0, device=device), (2, 3))
    assert m[[]].shape == (0, 3) and m[[[]]].shape == (1, 0, 3)
    m[[]] = 7
    assert m.tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(TypeError, match="0-d complex64"):
        operator.index(gk.asarray(1j, device=device))


def test_len_and_iteration(device):
    nx = np.arange(6).reshape(3, 2)
    x = gk.asarray(nx, device=device)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(type(r) is gk.Array for r in rows)
    assert [r.tolist() for r in rows] == nx.tolist()
    assert [r.item() for r in x[:, 1]] == [1, 3, 5]
    z = gk.asarray(1, device=device)
    with pytest.raises(TypeError):
        len(z)
    with pytest.raises(TypeError):
        iter(z)
    assert len(gk.zeros((0, 3), device=device)) == 0 and list(gk.zeros(0, device=device)) == []


def test_contains(device):
    x = gk.asarray([[1, 2], [3, 4]], device=device)
    assert 2 in x and 4.0 in x and 5 not in x
    assert "a" not in x and None not in x
    assert 0 not in gk.zeros(0, device=device)


# --- conversions ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_item_tolist_and_python_numbers(device, dtype):
    na = sample(np.random.default_rng(4), dtype, (2, 3))
    x = gk.asarray(na, device=device)
    assert x.tolist() == na.tolist()
    kind = {"bool": bool, "float32": float, "float64": float}.get(dtype, int)
    assert all(type(v) is kind for row in x.tolist() for v in row)
    one = x[1, 2]
    assert one.item() == na[1, 2].item() and type(one.item()) is kind
    assert one.tolist() == na[1, 2].item()
    assert float(one) == float(na[1, 2]) and int(one) == int(na[1, 2])
    assert bool(one) == bool(na[1, 2])
    assert bool(x[1:2, 2:3]) == bool(na[1, 2])  # any size-1 array
    with pytest.raises(ValueError):
        x.item()
    with pytest.raises(TypeError):
        float(x)
    with pytest.raises(TypeError):
        int(x)
    with pytest.raises(ValueError):
        bool(x)
    with pytest.raises(ValueError):
        bool(gk.zeros(0, dtype=dtype, device=device))


def test_index_protocol(device):
    assert operator.index(gk.asarray(3, device=device)) == 3
    assert [10, 20, 30][gk.asarray(1, dtype="int32", device=device)] == 20
    assert list(range(gk.asarray(2, dtype="uint8", device=device))) == [0, 1]
    for bad in (gk.asarray(1.0, device=device), gk.asarray(True, device=device),
                gk.asarray([1], device=device)):
        with pytest.raises(TypeError):
            operator.index(bad)
    assert int(gk.asarray(-2.7, device=device)) == -2
    with pytest.raises(ValueError):
        int(gk.asarray(float("nan"), device=device))


def test_to_cpu_astype_copy(device):
    x = gk.asarray([1.5, 2.5], device=device)
    assert x.to(device) is x and x.to(None) is x and x.to(dtype="float32") is x
    y = x.to(device, copy=True)
    assert y is not x and y.tolist() == x.tolist()
    c = x.to("cpu")
    assert c.device == "cpu" and c.tolist() == [1.5, 2.5]
    assert x.cpu().device == "cpu" and c.cpu() is c
    d = x.to(gk.float64)
    assert d.dtype == "float64" and d.device == device
    e = c.to(device, "int32")
    assert (e.device, e.dtype, e.tolist()) == (device, "int32", [1, 2])
    a = x.astype("int64")
    assert a.dtype == "int64" and a.tolist() == [1, 2]
    assert x.astype("float32", copy=False) is x
    assert x.astype("float32") is not x
    assert x.astype(gk.uint8, device="cpu").device == "cpu"
    z = x.copy()
    z[0] = 9
    assert x.tolist() == [1.5, 2.5]
    with pytest.raises(TypeError):
        x.astype("float128")
    with pytest.raises(ValueError):
        x.to("tpu")


def test_reshape_and_transpose(device):
    nx = np.arange(24).reshape(2, 3, 4)
    x = gk.asarray(nx, device=device)
    for args in [(6, 4), ((4, 6),), (-1,), (2, -1, 2), ([3, 8],), (24,)]:
        np.testing.assert_array_equal(host(x.reshape(*args)), nx.reshape(*args))
    for args in [(), (1, 0, 2), ((2, 0, 1),), (-1, 0, 1), (None,)]:
        np.testing.assert_array_equal(host(x.transpose(*args)), nx.transpose(*args))
    np.testing.assert_array_equal(host(x.T.reshape(-1)), nx.T.reshape(-1))  # a copy
    with pytest.raises(ValueError):
        x.reshape(5, 5)
    with pytest.raises(ValueError):
        x.reshape(-1, -1)
    with pytest.raises(TypeError):
        x.reshape(2.0, 12)
    with pytest.raises(ValueError):
        x.transpose(0, 0, 1)
    with pytest.raises(ValueError):
        x.transpose(0, 1)
    with pytest.raises(ValueError):
        x.transpose(0, 1, 3)


def has_buffer_protocol():
    try:
        memoryview(gk.zeros(1))
        return True
    except (BufferError, TypeError):
        return False


def test_numpy_is_zero_copy_on_cpu():
    if not has_buffer_protocol():
        pytest.skip("the buffer protocol (python/interop.c) is not there yet")
    x = gk.arange(6, dtype="float32").reshape(2, 3)
    n = x.numpy()
    assert isinstance(n, np.ndarray) and n.dtype == np.float32 and n.shape == (2, 3)
    assert np.shares_memory(n, x.numpy())
    x[0, 0] = 42
    assert n[0, 0] == 42


def test_numpy_of_a_device_array_is_a_type_error(device):
    x = gk.zeros(2, device=device)
    if device == "cpu":
        return
    with pytest.raises(TypeError, match=r"\.cpu\(\) first"):
        x.numpy()
    np.testing.assert_array_equal(x.cpu().numpy() if has_buffer_protocol() else host(x), [0, 0])


# --- the type's protocols ----------------------------------------------------------------

def test_repr_and_str_name_the_device(device):
    x = gk.asarray([[1.0, 2.0], [3.0, 4.0]], device=device)
    for text in (repr(x), str(x)):
        assert text.startswith("array(") and f"device={device}" in text
        assert "dtype=float32" in text


def test_repr_of_a_summary_reads_only_what_it_shows(device):
    """A summarized array's repr copies only its corners to the host: a
    broadcast view of 5.6e10 elements (448 GB) prints as NumPy's does."""
    values = np.arange(56).reshape(7, 1, 8)
    x = gk.broadcast_to(gk.asarray(values, device=device), (7, 10**9, 8))
    expected = " ".join(repr(np.broadcast_to(values, (7, 10**9, 8))).split())
    # (the longer suffix goes on a line of its own: compare words)
    assert " ".join(repr(x).split()) == expected[:-1] + f", dtype=int64, device={device})"


def test_repr_in_a_locale_whose_decimal_point_is_two_bytes(tmp_path, py):
    """printf writes the locale's decimal point; ps_AF's (U+066B) is two
    bytes, which once ended the digits: 1/3 printed as 0. and 1e10 as
    1.00e+00. The text stays NumPy's, whatever the locale."""
    localedef = shutil.which("localedef")
    if not localedef or not os.path.exists("/usr/share/i18n/locales/ps_AF"):
        pytest.skip("localedef and glibc's locale sources are needed to build ps_AF")
    (tmp_path / "locales").mkdir()
    made = subprocess.run([localedef, "-i", "ps_AF", "-f", "UTF-8",
                           str(tmp_path / "locales" / "ps_AF.UTF-8")], capture_output=True)
    if made.returncode not in (0, 1):  # 1: warnings only
        pytest.skip(f"localedef failed: {made.stderr!r}")
    result = py("""
        import locale, gpukit
        locale.setlocale(locale.LC_ALL, "ps_AF.UTF-8")
        assert locale.localeconv()["decimal_point"] == "\\u066b"
        print(repr(gpukit.asarray([1 / 3, 2.5], dtype="float64")))
        print(repr(gpukit.asarray([1.5, 2.25, 1e10], dtype="float64")))
        """, LOCPATH=tmp_path / "locales")
    assert result.stdout.splitlines() == [
        "array([0.33333333, 2.5       ], dtype=float64, device=cpu)",
        "array([1.50e+00, 2.25e+00, 1.00e+10], dtype=float64, device=cpu)"]


def test_format_of_0d_arrays_is_their_elements(device):
    """f"{x:.2f}" of a 0-d array formats the element, as NumPy's 0-d arrays
    do; other arrays take only the empty spec, as NumPy's."""
    assert f"{gk.asarray(1.23456, dtype='float64', device=device):.2f}" == "1.23"
    assert f"{gk.asarray(42, device=device):>5d}" == "   42"
    assert format(gk.asarray(True, device=device), "") == "True"
    assert f"{gk.asarray(1 + 2j, device=device):.1f}" == "1.0+2.0j"
    x = gk.asarray([1.5, 2.5], device=device)
    assert format(x, "") == str(x)
    with pytest.raises(TypeError, match="0-d"):
        format(x, ".2f")
    with pytest.raises(TypeError, match="0-d"):
        format(x[:1], ".2f")  # size 1 but 1-d, as NumPy


def test_array_namespace_hash_weakref_construction(device):
    x = gk.ones(2, device=device)
    assert x.__array_namespace__() is gk
    assert x.__array_namespace__(api_version="2025.12") is gk
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")
    with pytest.raises(TypeError):
        hash(x)
    r = weakref.ref(x)
    assert r() is x
    del x
    assert r() is None
    with pytest.raises(TypeError):
        gk.Array()
    with pytest.raises(TypeError):
        type("Sub", (gk.Array,), {})
    assert "thread" in gk.Array.__doc__.lower()


@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_and_copy(device, dtype):
    x = gk.asarray(sample(np.random.default_rng(5), dtype, (2, 3)), device=device)[:, ::-1]
    for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x)):
        assert y is not x
        assert (y.dtype, y.device, y.shape) == (x.dtype, x.device, x.shape)
        assert y.tolist() == x.tolist()
    y = copy.copy(x)
    y[0, 0] = 1
    y[0, 1] = 0
    assert y.tolist() != x.tolist()


def test_unpickling_refuses_a_shape_past_int64():
    # a pickle is outside data: its shape's product is checked, not
    # overflowed (undefined in C; the sanitizer build aborts on it)
    from gpukit import _gpukit
    for shape in [(2**62, 4), (2**40, 2**40), (0, 2**62, 4)]:
        with pytest.raises(ValueError, match="does not fit the shape|too many elements"):
            _gpukit._array_from_bytes(b"", shape, gk.float64, "cpu")


def test_threads_use_their_own_arrays_and_share_reads(device):
    shared = gk.arange(1000, dtype="float32", device=device)
    results, errors = {}, []

    def work(k):
        try:
            mine = gk.full(1000, float(k), device=device)
            for _ in range(20):
                mine = mine + shared - shared
            results[k] = (mine * 1).tolist()
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(results[k] == [float(k)] * 1000 for k in range(4))
