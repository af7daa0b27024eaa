"""The elementwise functions of the array API standard added in issue 15
(atan2 ... imag, python/ops.c) and the operators & | ^ ~ << >> // % (with
their reflected and in-place forms, python/array.c): every function on
every device and every dtype it takes, against NumPy 2, on special values
(NaN of both signs, +-inf, +-0.0, halves, subnormals, integer extremes,
shift counts at and beyond the width, negative counts) crossed with each
other, on 0-d, empty and broadcast operands; the TypeError of every dtype a
function refuses; round to decimals. Where gpukit's documented result
differs from NumPy's
(array.h: integer reciprocal of 0, the rounding functions and conj of
bools, the float dtype integers compute in), the expectation says so."""
import warnings

import numpy as np
import pytest

import gpukit as gk

from conftest import host

FLOATS = ("float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTEGERS = SIGNED + UNSIGNED
DTYPES = ("bool",) + INTEGERS + FLOATS

BINARY = {
    "atan2": np.arctan2, "copysign": np.copysign, "hypot": np.hypot,
    "logaddexp": np.logaddexp, "nextafter": np.nextafter, "floor_divide": np.floor_divide,
    "remainder": np.remainder, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}
UNARY = {
    "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "round": np.round, "sign": np.sign,
    "signbit": np.signbit, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "log2": np.log2, "log10": np.log10, "square": np.square, "positive": np.positive,
    "reciprocal": np.reciprocal, "bitwise_invert": np.invert, "logical_not": np.logical_not,
    "conj": np.conj, "real": np.real, "imag": np.imag,
}
# Computing in float (integers in float32 up to 16 bits, else float64).
FLOATING = {"atan2", "copysign", "hypot", "logaddexp", "nextafter", "log2", "log10"}
# Not correctly rounded: compared within a tolerance.
INEXACT = {"atan2", "hypot", "logaddexp", "log2", "log10"}


def takes(name, dtype):
    """The dtypes each function takes (array.h); the others are TypeErrors."""
    if name in ("floor_divide", "remainder", "sign", "square", "positive", "reciprocal"):
        return dtype != "bool"
    if name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert"):
        return dtype not in FLOATS
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        return dtype in INTEGERS
    return True


def float_for(dtype):
    if dtype in FLOATS:
        return dtype
    if dtype in ("bool", "int8", "uint8"):
        return "float16"  # NumPy's choice, which gpukit follows
    return "float64" if dtype in ("int32", "int64", "uint32", "uint64") else "float32"


def specials(dtype):
    """The special values of dtype, as a NumPy array."""
    if dtype == "bool":
        return np.array([True, False])
    if dtype in FLOATS:
        values = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5,
                  2.5, -2.5, 3.0, -7.0, 0.1, -0.7, 1e-40, 5e-324, 1e30, -1e30, 123.456,
                  np.finfo(dtype).max, 8388607.5, 4503599627370495.5, 9007199254740993.0]
        with np.errstate(all="ignore"):
            return np.array(values, dtype=dtype)
    info, bits = np.iinfo(dtype), np.iinfo(dtype).bits
    values = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 7, bits - 1, bits,
              bits + 1, 100]
    if info.min < 0:
        values += [-1, -2, -7, -bits]
    return np.array(values, dtype=dtype)


def pairs(dtype):
    v = specials(dtype)
    return np.repeat(v, len(v)), np.tile(v, len(v))


def to_device(values, device):
    values = np.asarray(values)
    return gk.asarray(values if values.ndim == 0 else np.ascontiguousarray(values),
                      device=device)


def numpy_result(name, dtype, *operands):
    """NumPy's result, with gpukit's documented differences."""
    fn = BINARY.get(name) or UNARY[name]
    if name in FLOATING:
        operands = [o.astype(float_for(dtype)) for o in operands]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = np.asarray(fn(*operands))
    a = operands[0]
    if name == "reciprocal" and dtype in INTEGERS:
        expected = np.where(a == 0, 0, expected).astype(dtype)  # NumPy's is undefined there
    if dtype == "bool" and name in ("ceil", "floor", "trunc", "round", "conj"):
        expected = a.copy()  # gpukit keeps bools as they are; NumPy gives float16/int8
    if name == "imag":
        expected = np.zeros_like(a)
    return expected


def assert_same(name, got, expected):
    """Exact (zeros' signs and NaN included) but for the inexact functions."""
    got = host(got) if isinstance(got, gk.Array) else got
    assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
    assert got.shape == expected.shape
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, err_msg=name)
        return
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"{name}: NaN")
    exact = ~nan & (~np.isfinite(expected) | (expected == 0) | (name not in INEXACT))
    np.testing.assert_array_equal(got[exact], expected[exact], err_msg=name)
    if name != "sign":  # sign(NaN) is NaN, of either sign
        np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(expected[exact]),
                                      err_msg=f"{name}: signs")
    if name in INEXACT:
        rest = ~nan & ~exact
        tiny = np.finfo(got.dtype).tiny
        scale = np.maximum(np.abs(expected[rest]), tiny)
        rtol = 4e-6 if got.dtype == np.float32 else 1e-13
        assert (np.abs(got[rest] - expected[rest]) <= rtol * scale).all(), name


# --- every function, every dtype, special values crossed ---

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_functions(device, name, dtype):
    a, b = pairs(dtype)
    x, y = to_device(a, device), to_device(b, device)
    function = getattr(gk, name)
    if not takes(name, dtype):
        with pytest.raises(TypeError, match=rf"{name}.*{dtype}"):
            function(x, y)
        return
    expected = numpy_result(name, dtype, a, b)
    if name == "logaddexp":  # cancellation: compare against the larger argument's scale
        got = host(function(x, y))
        assert got.dtype == expected.dtype
        big = np.maximum(np.abs(a.astype(got.dtype)), np.abs(b.astype(got.dtype)))
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(got[~finite], expected[~finite])
        rtol = 4e-6 if got.dtype == np.float32 else 1e-13
        assert (np.abs(got[finite] - expected[finite])
                <= rtol * np.maximum(big[finite], np.abs(expected[finite])) + 1e-300).all()
        return
    assert_same(name, function(x, y), expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions(device, name, dtype):
    a = specials(dtype)
    x = to_device(a, device)
    function = getattr(gk, name)
    if not takes(name, dtype):
        with pytest.raises(TypeError, match=rf"{name}.*{dtype}"):
            function(x)
        return
    assert_same(name, function(x), numpy_result(name, dtype, a))


@pytest.mark.parametrize("dtype", FLOATS + ("int16", "uint32", "int64"))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_random_and_broadcast(device, name, dtype):
    """Large random operands (the threaded loops), a row against a column,
    and a 0-d operand on either side."""
    if not takes(name, dtype):
        return
    rng = np.random.default_rng(15)
    if dtype in FLOATS:
        a = rng.uniform(-1e3, 1e3, 70001).astype(dtype)
        b = rng.uniform(-50, 50, 70001).astype(dtype)
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, 70001, dtype=dtype, endpoint=True)
        b = rng.integers(max(info.min, -70), 70, 70001).astype(dtype)
    function = getattr(gk, name)
    for left, right in ((a, b), (a[:300].reshape(300, 1), b[:257]), (a, b[5:6].reshape(())),
                        (a[7:8].reshape(()), b)):
        got = function(to_device(left, device), to_device(right, device))
        expected = numpy_result(name, dtype, left, right)
        if name == "logaddexp":
            np.testing.assert_allclose(host(got), expected, rtol=4e-6 if dtype == "float32"
                                       else 1e-13, atol=1e-6 if dtype == "float32" else 1e-12)
            continue
        assert_same(name, got, expected)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_shapes(device, name):
    """0-d, empty and strided (transposed) operands keep their shape."""
    for values in (np.float32(-2.5), np.zeros((0, 3), np.float32),
                   np.arange(-6, 6, dtype=np.float64).reshape(3, 4).T / 4):
        x = to_device(values, device)
        if values.ndim == 2 and values.shape[0] == 4:
            x = gk.permute_dims(to_device(values.T, device), (1, 0))  # a strided view
        if not takes(name, str(values.dtype)):
            with pytest.raises(TypeError):
                getattr(gk, name)(x)
            continue
        assert_same(name, getattr(gk, name)(x), numpy_result(name, str(values.dtype), values))


def test_mixed_dtypes_and_scalars(device):
    """Promotion as for the other functions: NumPy 2's table, Python scalars
    weak."""
    i8 = np.array([-7, -1, 0, 5, 100], np.int8)
    u8 = np.array([3, 2, 1, 255, 7], np.uint8)
    f32 = np.array([-7.5, -0.0, 0.5, 5, 1e30], np.float32)
    x8, xu8, xf = to_device(i8, device), to_device(u8, device), to_device(f32, device)
    with np.errstate(all="ignore"):
        assert_same("floor_divide", gk.floor_divide(x8, xu8), np.floor_divide(i8, u8))
        assert_same("remainder", gk.remainder(x8, xf), np.remainder(i8, f32))
    assert_same("bitwise_left_shift", gk.bitwise_left_shift(xu8, x8),
                np.left_shift(u8.astype(np.int16), i8.astype(np.int16)))
    assert_same("logical_and", gk.logical_and(x8, xf), np.logical_and(i8, f32))
    assert gk.atan2(x8, xu8).dtype == gk.float32  # int16 math: float32
    assert gk.hypot(to_device(np.array([3, 4], np.int32), device), 4).dtype == gk.float64
    # Python scalars are weak: they take the array's dtype where their kind fits.
    for name, value, dtype in (("bitwise_left_shift", 3, "int8"), ("floor_divide", 2, "int8"),
                               ("remainder", -3, "int8"), ("bitwise_and", 6, "int8"),
                               ("floor_divide", 2.5, "float64"), ("copysign", -1.0, "float32"),
                               ("logical_or", 0, "bool"), ("atan2", 1, "float16")):
        base = f32 if name in ("copysign",) else i8
        x = xf if base is f32 else x8
        result = getattr(gk, name)(x, value)
        assert result.dtype == dtype, (name, result.dtype)
        with np.errstate(all="ignore"):
            expected = BINARY[name](base, np.asarray(value, dtype=dtype if name not in
                                                     ("logical_or", "atan2") else base.dtype))
        if name == "atan2":
            expected = np.arctan2(base.astype(np.float32), np.float32(value))
        assert_same(name, result, np.asarray(expected).astype(dtype))
        # and the value first
        reflected = getattr(gk, name)(value, x)
        assert reflected.dtype == dtype
    with pytest.raises((OverflowError, ValueError)):
        gk.bitwise_left_shift(x8, 300)  # a count that does not fit int8, as NumPy 2
    bools = to_device(np.array([True, False]), device)
    assert gk.bitwise_and(bools, True).dtype == gk.bool
    assert gk.bitwise_or(bools, 2).dtype == gk.int64


# --- the operators ---

OPERATORS = {
    "__and__": ("bitwise_and", np.bitwise_and), "__or__": ("bitwise_or", np.bitwise_or),
    "__xor__": ("bitwise_xor", np.bitwise_xor),
    "__lshift__": ("bitwise_left_shift", np.left_shift),
    "__rshift__": ("bitwise_right_shift", np.right_shift),
    "__floordiv__": ("floor_divide", np.floor_divide), "__mod__": ("remainder", np.remainder),
}
SYMBOLS = {"__and__": "&", "__or__": "|", "__xor__": "^", "__lshift__": "<<", "__rshift__": ">>",
           "__floordiv__": "//", "__mod__": "%"}


@pytest.mark.parametrize("dtype", ("bool", "int8", "uint16", "int32", "int64", "uint64",
                                   "float32", "float64"))
@pytest.mark.parametrize("method", sorted(OPERATORS))
def test_operators(device, method, dtype):
    name, numpy_function = OPERATORS[method]
    a, b = pairs(dtype)
    x, y = to_device(a, device), to_device(b, device)
    symbol = SYMBOLS[method]
    if not takes(name, dtype):
        with pytest.raises(TypeError):
            eval(f"x {symbol} y")
        return
    expected = numpy_result(name, dtype, a, b)
    assert_same(name, eval(f"x {symbol} y"), expected)
    # reflected, with a NumPy array on the left: still a gpukit Array
    assert_same(name, eval(f"a {symbol} y"), expected)
    # in place: the same object, its dtype kept
    z = to_device(a, device)
    before = z
    exec(f"z {symbol}= y")
    assert z is before
    assert_same(name, z, expected)


def test_operators_with_python_scalars(device):
    i8 = np.array([-128, -7, -1, 0, 1, 5, 127], np.int8)
    x = to_device(i8, device)
    with np.errstate(all="ignore"):
        for text in ("x & 3", "3 & x", "x | 8", "8 | x", "x ^ -1", "-1 ^ x", "x << 2", "2 << x",
                     "x >> 1", "100 >> x", "x // 3", "-7 // x", "x % 3", "-7 % x", "x // -2",
                     "x % -2"):
            result = eval(text)
            expected = eval(text.replace("x", "i8"))
            assert result.dtype == gk.int8, text
            assert_same(text, result, expected)
        f = np.array([-7.5, -0.0, 0.0, 2.5, np.inf, np.nan], np.float32)
        y = to_device(f, device)
        for text in ("y // 2", "y % 2", "y // -2.0", "y % -2.0", "5 // y", "5.5 % y",
                     "y // 0.0", "y % 0.0"):
            result = eval(text)
            assert result.dtype == gk.float32, text
            assert_same(text, result, eval(text.replace("y", "f")))
        # an integer array with a float value: float64, as NumPy 2
        assert (x // 2.5).dtype == gk.float64
        assert_same("//", x // 2.5, i8 // 2.5)


def test_inplace_operators(device):
    i32 = np.array([-9, -4, 0, 3, 7, 2**31 - 1], np.int32)
    x = to_device(i32, device)
    for text in ("//= 2", "%= 3", "&= 6", "|= 1", "^= 5", "<<= 1", ">>= 1"):
        expected = i32.copy()
        exec(f"expected {text}")
        before = x
        exec(f"x {text}")
        assert x is before and x.dtype == gk.int32
        assert_same(text, x, expected)
        i32 = expected
    with pytest.raises(TypeError, match="same_kind"):
        exec("x //= 1.5")  # a float result cannot go into int32 (NumPy's UFuncTypeError)
    b = to_device(np.array([True, False, True]), device)
    b &= False
    assert_same("&=", b, np.array([False, False, False]))
    f = to_device(np.array([1.5, -2.5]), device)
    with pytest.raises(TypeError, match="float64"):
        f &= 1


def test_invert_and_positive(device):
    for dtype in DTYPES:
        values = specials(dtype)
        x = to_device(values, device)
        if dtype in FLOATS:
            with pytest.raises(TypeError, match=f"bitwise_invert.*{dtype}"):
                ~x
        else:
            assert_same("~", ~x, ~values)
        if dtype == "bool":
            with pytest.raises(TypeError, match="positive.*bool"):
                +x
        else:
            y = +x
            assert y is not x
            assert_same("+", y, values)


# --- what else the standard asks ---

@pytest.mark.parametrize("dtype", ("float16", "int16", "uint8", "int64") + FLOATS)
def test_round_to_decimals(device, dtype):
    # NumPy's round(x, decimals): x * 10**d rounded half to even and divided
    # back (integers through float64 for d < 0), through gpukit.round and
    # NumPy's dispatch alike
    x = np.random.default_rng(5).standard_normal(500) * 1000
    x = np.concatenate([x, [0.125, 0.375, -2.5, 12.5, 1250, 1350, -1250, 0.0, -0.0]])
    x = (np.abs(x) % 250 if dtype == "uint8" else x).astype(dtype)
    a = gk.asarray(x, device=device)
    for decimals in (0, 1, 2, 3, -1, -2):
        with np.errstate(all="ignore"):
            expected = np.round(x, decimals)
        for got in (gk.round(a, decimals=decimals), np.round(a, decimals), a.round(decimals),
                    round(a, decimals)):
            np.testing.assert_array_equal(host(got), expected, strict=True)
    z = (x[:8] + 1j * x[8:16]).astype("complex128")  # each part, within an ulp
    np.testing.assert_allclose(host(gk.round(gk.asarray(z, device=device), decimals=2)),
                               np.round(z, 2), rtol=1e-15)


def test_divmod_and_round_builtins(device):
    # Python's divmod() and round() on arrays, as on NumPy's
    n = np.array([7.5, -7.5, 3.0, -0.5])
    x = gk.asarray(n, device=device)
    for got, want in ((divmod(x, 2), divmod(n, 2)), (divmod(10, x), divmod(10, n))):
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(host(g), w)
    np.testing.assert_array_equal(host(round(x)), np.round(n))
    i = gk.asarray([7, -7], device=device)
    assert [v.tolist() for v in divmod(i, 3)] == [[2, -3], [1, 2]]


def test_real_and_imag(device):
    values = np.array([[1.5, -2.0], [0.0, np.nan]], np.float32)
    x = to_device(values, device)
    assert_same("real", gk.real(x), values)
    assert_same("imag", gk.imag(x), np.zeros_like(values))
    assert_same("conj", gk.conj(x), values)
    assert gk.imag(to_device(np.array([3], np.int16), device)).dtype == gk.int16


def test_errors():
    x = gk.asarray([1.5, 2.5])
    with pytest.raises(TypeError, match=r"bitwise_and: not defined for float32"):
        gk.bitwise_and(x, x)
    with pytest.raises(TypeError, match="shifts take integer dtypes"):
        gk.bitwise_left_shift(x, 1)
    with pytest.raises(TypeError, match="bitwise_left_shift.*bool.*integer dtype"):
        gk.bitwise_left_shift(gk.asarray([True]), gk.asarray([True]))
    with pytest.raises(TypeError, match="cast to an integer dtype"):
        gk.floor_divide(gk.asarray([True]), gk.asarray([True]))
    with pytest.raises(TypeError, match="logical_not"):
        -gk.asarray([True])  # NumPy's TypeError too, with the way out named
    with pytest.raises(TypeError, match="takes exactly 2 arguments"):
        gk.atan2(x)
    with pytest.raises(TypeError, match="takes exactly 1 argument"):
        gk.ceil(x, x)
    with pytest.raises(ValueError, match="broadcast"):
        gk.hypot(gk.asarray([1.0, 2.0]), gk.asarray([1.0, 2.0, 3.0]))
