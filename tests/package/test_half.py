"""float16 and bfloat16 on every device: storage, conversions, elementwise
arithmetic computed in float32 and rounded once (NumPy's float16 results,
bit for bit where the operation is correctly rounded), reductions that
accumulate in float32, sorting, matmul, printing and the interop protocols.

NumPy is the reference for float16. It has no bfloat16, so bfloat16's
reference is `rounded()`, which rounds a float64 to any binary format with
Python's exact round-half-even (checked against NumPy's float16 first)."""
import math

import numpy as np
import pytest

import gpukit
from conftest import on

HALVES = ["float16", "bfloat16"]
# significand bits, smallest normal exponent, largest finite value
FORMATS = {"float16": (11, -14, 65504.0), "bfloat16": (8, -126, float.fromhex("0x1.fep127"))}


def rounded(x, name):
    """x (a Python float) rounded to nearest, ties to even, into the format
    `name`, as a Python float: an independent reference (no bit tricks)."""
    digits, min_exp, largest = FORMATS[name]
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    _, e = math.frexp(abs(x))           # abs(x) = m * 2**e, 0.5 <= m < 1
    exponent = max(e - 1, min_exp)      # of the leading digit, subnormals fixed
    quantum = 2.0 ** (exponent - digits + 1)
    r = round(x / quantum) * quantum    # round() on floats: exact, half to even
    return math.copysign(math.inf if abs(r) > largest else r, x)


def values_of(x):
    """An Array's elements as a float64 NumPy array (bfloat16 through its
    exact float32 values), on any device."""
    assert type(x) is gpukit.Array
    wide = x.astype(gpukit.float32) if x.dtype == gpukit.bfloat16 else x
    return np.array(wide.tolist(), dtype=np.float64).reshape(x.shape)


def same(got, expected, zero_signs=True):
    """Equal element for element, NaN equal to NaN and (zero_signs) the
    sign of zero compared."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    assert got.shape == expected.shape
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan), (got, expected)
    assert np.array_equal(got[~nan], expected[~nan]), (got[~nan], expected[~nan])
    if zero_signs:
        assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))


def specials(name):
    digits, min_exp, largest = FORMATS[name]
    tiny = 2.0 ** (min_exp - digits + 1)  # the smallest subnormal
    return [0.0, -0.0, 1.0, -1.0, 0.5, 1 / 3, 2.0 ** min_exp, tiny, -tiny, 3 * tiny,
            largest, -largest, math.inf, -math.inf, math.nan, 1e-3, 123.456, -7.25]


def sample(name, n=997, seed=0):
    """n values exactly representable in `name`, specials first."""
    rng = np.random.default_rng(seed)
    raw = np.concatenate([specials(name), rng.standard_normal(n) * 10,
                          rng.uniform(-2, 2, 50), rng.integers(-300, 300, 50)])
    return [rounded(float(v), name) for v in raw]


# --- the reference itself ----------------------------------------------------

def test_reference_rounding_is_numpy_float16():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-9, 6, 20000),
                        np.arange(-70000, 70000, 3.7), specials("float16")])
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16).astype(np.float64)
    same([rounded(float(v), "float16") for v in x], expected)


# --- dtypes, promotion, finfo -----------------------------------------------

def test_dtype_objects():
    assert gpukit.float16 == "float16" and gpukit.float16 == np.float16
    assert gpukit.float16 == np.dtype("float16") and gpukit.float16.itemsize == 2
    assert gpukit.bfloat16 == "bfloat16" and gpukit.bfloat16.itemsize == 2
    assert gpukit.bfloat16 != gpukit.float16 and gpukit.bfloat16.kind == "f"
    assert gpukit.isdtype(gpukit.bfloat16, "real floating")


NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "float32", "float64"]


@pytest.mark.parametrize("other", NUMPY_DTYPES)
def test_float16_promotion_is_numpy(other):
    assert gpukit.result_type(gpukit.float16, other) == np.result_type(np.float16, other)
    assert gpukit.can_cast(gpukit.float16, other) == np.can_cast(np.float16, other)
    assert gpukit.can_cast(other, gpukit.float16) == np.can_cast(other, np.float16)


def test_bfloat16_promotion():
    # bfloat16 holds the 8-bit integers exactly, no wider ones; float16 and
    # bfloat16 meet in float32 (neither holds the other).
    table = {"bool": "bfloat16", "int8": "bfloat16", "uint8": "bfloat16", "int16": "float32",
             "uint16": "float32", "int32": "float64", "int64": "float64",
             "float16": "float32", "bfloat16": "bfloat16", "float32": "float32",
             "float64": "float64"}
    for other, expected in table.items():
        assert gpukit.result_type(gpukit.bfloat16, other) == expected, other
    assert gpukit.can_cast(gpukit.bfloat16, gpukit.float32)
    assert not gpukit.can_cast(gpukit.bfloat16, gpukit.float16)
    assert not gpukit.can_cast(gpukit.float16, gpukit.bfloat16)


def test_finfo():
    f = gpukit.finfo(gpukit.float16)
    n = np.finfo(np.float16)
    assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == \
        (16, float(n.eps), float(n.max), float(n.min), float(n.smallest_normal))
    b = gpukit.finfo(gpukit.bfloat16)
    assert (b.bits, b.eps, b.max, b.smallest_normal) == \
        (16, 2.0 ** -7, FORMATS["bfloat16"][2], 2.0 ** -126)


def test_math_of_8bit_integers_is_float16_as_numpy(device):
    x = on(np.arange(-5, 5, dtype=np.int8), device)
    assert gpukit.sqrt(x).dtype == np.sqrt(np.int8(1)).dtype == gpukit.float16


# --- conversions -------------------------------------------------------------

@pytest.mark.parametrize("name", HALVES)
def test_from_python_and_float64_round_once(device, name):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-8, 6, 3000),
                        specials(name)])
    expected = [rounded(float(v), name) for v in x]
    same(values_of(gpukit.asarray(x.tolist(), dtype=name, device=device)), expected)
    wide = gpukit.asarray(x, device=device)  # float64 on the device
    same(values_of(wide.astype(name)), expected)


@pytest.mark.parametrize("name", HALVES)
def test_float64_just_off_a_tie_rounds_once(device, name):
    # Each tie between neighbouring 16-bit values, and the doubles just
    # above and below it, which round to the tie itself in float32: going
    # through float32 to nearest would then round the tie to even, the
    # wrong way for the two off it. Every 13th value of the format, both
    # signs, strided.
    step = 13 if name == "float16" else 97
    top = 0x7C00 if name == "float16" else 0x7F80
    bits = np.arange(0, top, step, dtype=np.uint32)
    values = (bits.astype(np.uint16).view(np.float16).astype(np.float64) if name == "float16"
              else (bits << 16).view(np.float32).astype(np.float64))
    ties = (values[:-1] + values[1:]) / 2
    x = np.concatenate([ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf)])
    x = np.concatenate([x, -x])
    expected = [rounded(float(v), name) for v in x]
    wide = gpukit.asarray(np.repeat(x, 2), device=device)
    same(values_of(wide[::2].astype(name)), expected)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("target", NUMPY_DTYPES + ["bfloat16"])
def test_conversion_to_every_dtype(device, name, target):
    x = sample(name)
    if target not in HALVES and target[0] in "iub":  # in range: casts are defined
        x = [v for v in x if math.isfinite(v) and (target == "bool" or
             np.iinfo(target).min <= v <= np.iinfo(target).max)]
    a = gpukit.asarray(x, dtype=name, device=device)
    got = a.astype(target)
    assert got.dtype == target
    if target in HALVES:
        expected = [rounded(v, target) for v in x]
    else:
        expected = np.array(x, np.float64).astype(target)
    same(values_of(got) if target in HALVES else
         np.array(got.tolist(), dtype=target), expected)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("source", ["bool", "int8", "uint8", "int32", "int64", "uint64",
                                    "float32"])
def test_conversion_from_every_dtype(device, name, source):
    rng = np.random.default_rng(3)
    if source == "bool":
        x = np.array([True, False, True])
    elif source == "float32":
        x = np.concatenate([rng.standard_normal(2000).astype(np.float32) * 300,
                            np.array(specials("bfloat16"), np.float32)])
    else:
        info = np.iinfo(source)
        x = np.concatenate([rng.integers(info.min, info.max, 500, dtype=source, endpoint=True),
                            np.array([info.min, info.max, 0, 1, min(2049, info.max),
                                      min(4097, info.max)], dtype=source)])
    a = on(x, device)
    expected = [rounded(float(v), name) for v in x]
    same(values_of(a.astype(name)), expected)


def test_bfloat16_nan_and_ties(device):
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even (1); the next
    # tie up goes to even above.
    x = on(np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, math.nan, -math.nan], np.float32), device)
    got = values_of(x.astype(gpukit.bfloat16))
    assert got[0] == 1.0 and got[1] == 1 + 2 * 2.0 ** -7
    assert np.isnan(got[2]) and np.isnan(got[3])


# --- elementwise --------------------------------------------------------------

EXACT_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "copysign",
                "nextafter", "remainder", "floor_divide", "equal", "less", "greater_equal",
                "not_equal"]
EXACT_UNARY = ["sqrt", "abs", "negative", "floor", "ceil", "trunc", "round", "square",
               "sign", "isnan", "isinf", "isfinite", "signbit"]
MATH_UNARY = ["exp", "log", "sin", "cos", "tan", "tanh", "sinh", "cosh", "expm1", "log1p", "asin",
              "acos", "atan", "asinh", "acosh", "atanh", "log2", "log10"]


def float16_pair(seed):
    rng = np.random.default_rng(seed)
    x = np.array(sample("float16", seed=seed), np.float16)
    y = np.concatenate([rng.standard_normal(x.size - 7) * 4, [0, -0.0, 1, np.inf, np.nan, 3, -2]])
    return x, rng.permutation(y).astype(np.float16)


@pytest.mark.parametrize("op", EXACT_BINARY)
def test_float16_binary_is_numpy(device, op):
    x, y = float16_pair(4)
    with np.errstate(all="ignore"):
        expected = getattr(np, op)(x, y)
    got = getattr(gpukit, op)(on(x, device), on(y, device))
    assert got.dtype == expected.dtype
    same(np.array(got.tolist(), dtype=expected.dtype), expected)


@pytest.mark.parametrize("op", EXACT_UNARY)
def test_float16_unary_is_numpy(device, op):
    x, _ = float16_pair(5)
    with np.errstate(all="ignore"):
        expected = getattr(np, op)(x)
    got = getattr(gpukit, op)(on(x, device))
    assert got.dtype == expected.dtype
    same(np.array(got.tolist(), dtype=expected.dtype), expected)


@pytest.mark.parametrize("op", MATH_UNARY)
def test_float16_math_within_an_ulp(device, op):
    # NumPy computes float16 math in float32 and rounds once, as gpukit
    # does; float32 libraries may differ in their last bit, which can move
    # a result that lands near a float16 tie by one float16 ulp.
    x, _ = float16_pair(6)
    with np.errstate(all="ignore"):
        expected = getattr(np, op)(x)
    got = np.array(getattr(gpukit, op)(on(x, device)).tolist(), dtype=np.float16)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    finite = np.isfinite(expected)
    assert np.array_equal(got[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)])
    gap = np.abs(got[finite].view(np.int16).astype(np.int32) -
                 expected[finite].view(np.int16).astype(np.int32))
    assert gap.max(initial=0) <= 1
    assert np.mean(gap == 0) > 0.99


@pytest.mark.parametrize("op", ["add", "multiply", "divide", "subtract", "maximum"])
def test_bfloat16_binary_rounds_float32_once(device, op):
    x = np.array(sample("bfloat16", seed=7), np.float32)
    y = np.random.default_rng(8).permutation(x)
    with np.errstate(all="ignore"):
        exact = getattr(np, op)(x, y)  # float32's result, rounded once below
    got = getattr(gpukit, op)(on(x, device).astype("bfloat16"), on(y, device).astype("bfloat16"))
    assert got.dtype == gpukit.bfloat16
    same(values_of(got), [rounded(float(v), "bfloat16") for v in exact])


@pytest.mark.parametrize("name", HALVES)
def test_layouts_and_scalars(device, name):
    x = gpukit.reshape(gpukit.arange(24, dtype=name, device=device), (4, 6))
    base = values_of(x)
    same(values_of(x[::-1, ::2] + 1.5), base[::-1, ::2] + 1.5)           # strided, reversed
    same(values_of(x + x[0]), base + base[0])                             # broadcast
    same(values_of(x.T * 2), base.T * 2)                                  # transposed
    y = x[1:3]
    y += 1                                                                # in place, a view
    same(values_of(x)[1:3], base[1:3] + 1)
    assert (x + 2.5).dtype == name and (x * 3).dtype == name             # weak scalars
    assert (x + gpukit.ones(1, dtype="float32", device=device)).dtype == gpukit.float32
    e = gpukit.ones((0, 3), dtype=name, device=device)
    assert (e + e).shape == (0, 3) and gpukit.sum(e).item() == 0.0


@pytest.mark.parametrize("name", HALVES)
def test_where_take_mask_and_setitem(device, name):
    x = gpukit.asarray([1.5, -2.0, 3.0, 0.25, 7.0], dtype=name, device=device)
    same(values_of(gpukit.where(x > 0, x, -x)), [1.5, 2.0, 3.0, 0.25, 7.0])
    same(values_of(x[x > 1]), [1.5, 3.0, 7.0])
    same(values_of(gpukit.take(x, gpukit.asarray([4, 0], device=device))), [7.0, 1.5])
    x[1] = 0.1
    assert values_of(x)[1] == rounded(0.1, name)
    same(values_of(gpukit.full((2,), 1 / 3, dtype=name, device=device)), [rounded(1 / 3, name)] * 2)
    same(values_of(gpukit.concat([x[:1], x[-1:]])), [1.5, 7.0])


# --- reductions, sorting, matmul, random ------------------------------------

@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "min", "max", "std", "var"])
def test_reductions_accumulate_in_float32(device, name, op):
    rng = np.random.default_rng(9)
    x32 = np.array([rounded(float(v), name) for v in rng.uniform(0.5, 1.5, 3000)], np.float32)
    a = on(x32, device).astype(name)
    got = getattr(gpukit, op)(a)
    assert got.dtype == name
    # float32 accumulation then one rounding; a float16 running sum of 3000
    # values near 1 would be off by hundreds (its ulp at 2048 is 2).
    expected = rounded(float(getattr(np, op)(x32.astype(np.float64))), name)
    assert got.item() == pytest.approx(expected, rel=2.0 ** -FORMATS[name][0] * 2)
    rows = getattr(gpukit, op)(gpukit.reshape(a, (30, 100)), axis=1)
    want = [rounded(float(v), name) for v in getattr(np, op)(x32.reshape(30, 100).astype(np.float64), axis=1)]
    np.testing.assert_allclose(values_of(rows), want, rtol=2.0 ** -FORMATS[name][0] * 2)


@pytest.mark.parametrize("name", HALVES)
def test_sorting_searching_sets(device, name):
    x = sample(name, n=200, seed=10)
    a = gpukit.asarray(x, dtype=name, device=device)
    same(values_of(gpukit.sort(a)), np.sort(np.array(x)), zero_signs=False)
    assert gpukit.argmax(a).item() == int(np.nanargmax(np.where(np.isnan(x), -np.inf, x))) or \
        math.isnan(x[gpukit.argmax(a).item()])
    finite = [v for v in x if math.isfinite(v)]
    s = gpukit.sort(gpukit.asarray(finite, dtype=name, device=device))
    probe = gpukit.asarray([0.0, 1.0, -1.0], dtype=name, device=device)
    assert gpukit.searchsorted(s, probe).tolist() == np.searchsorted(np.sort(finite), [0.0, 1.0, -1.0]).tolist()
    u = gpukit.unique_values(gpukit.asarray([3, 1, 3, 2, 1], dtype=name, device=device))
    same(values_of(u), [1, 2, 3])
    same(values_of(gpukit.cumulative_sum(gpukit.asarray([1, 2, 3.5], dtype=name, device=device))),
         [1, 3, 6.5])


@pytest.mark.parametrize("name", HALVES)
def test_matmul_sums_in_float32(device, name):
    rng = np.random.default_rng(11)
    a = np.array([[rounded(float(v), name) for v in row] for row in rng.uniform(-1, 1, (9, 70))])
    b = np.array([[rounded(float(v), name) for v in row] for row in rng.uniform(-1, 1, (70, 5))])
    got = gpukit.matmul(on(a, device).astype(name), on(b, device).astype(name))
    assert got.dtype == name and got.shape == (9, 5)
    want = [[rounded(float(v), name) for v in row] for row in a @ b]
    np.testing.assert_allclose(values_of(got), want, rtol=2.0 ** -FORMATS[name][0] * 2, atol=1e-3)


@pytest.mark.parametrize("name", HALVES)
def test_vecdot_sums_in_float32_as_matmul(device, name):
    # products in float32 too: 300 * 300 overflows float16, and a product
    # rounded to 16 bits loses a bit
    big = on(np.array([300.0, 300.0]), device).astype(name)
    other = on(np.array([300.0, -300.0]), device).astype(name)
    assert float(values_of(gpukit.vecdot(big, other))) == 0.0
    rng = np.random.default_rng(12)
    a = np.array([[rounded(float(v), name) for v in row] for row in rng.uniform(-1, 1, (20, 64))])
    b = np.array([[rounded(float(v), name) for v in row] for row in rng.uniform(-1, 1, (20, 64))])
    got = gpukit.vecdot(on(a, device).astype(name), on(b, device).astype(name))
    assert got.dtype == name
    # the exact sums rounded once (a float32 sum rounds them the same here)
    want = [rounded(float(v), name) for v in np.sum(a * b, axis=-1)]
    np.testing.assert_array_equal(values_of(got), want)


@pytest.mark.parametrize("name", HALVES)
def test_random_and_creation(device, name):
    u = gpukit.random.uniform((1000,), low=-1, high=1, seed=3, dtype=name, device=device)
    assert u.dtype == name and -1 <= gpukit.min(u).item() and gpukit.max(u).item() <= 1
    same(values_of(u), [rounded(v, name) for v in gpukit.random.uniform(
        (1000,), low=-1, high=1, seed=3, dtype="float32", device=device).tolist()])
    # [low, high) holds after rounding to 16 bits too: a float32 number
    # that rounds to high (or below low) is held to the dtype's values in
    # the interval; where none lies there, a ValueError
    for low, high in [(0.1, 0.2), (-3, -2.999), (2.5, 3), (-1e-3, 1e-3)]:
        u = gpukit.random.uniform((20000,), low=low, high=high, seed=4, dtype=name,
                                  device=device)
        values = values_of(u)
        assert min(values) >= low and max(values) < high, (low, high)
    with pytest.raises(ValueError, match=f"no {name} value lies in"):
        gpukit.random.uniform((3,), low=1.0001, high=1.0002, dtype=name, device=device)
    r = gpukit.arange(0, 1, 0.25, dtype=name, device=device)
    same(values_of(r), [0, 0.25, 0.5, 0.75])
    same(values_of(gpukit.linspace(0, 1, 5, dtype=name, device=device)), [0, 0.25, 0.5, 0.75, 1])
    same(values_of(gpukit.eye(2, dtype=name, device=device)), np.eye(2))


def test_linalg_factorizations_refuse_as_numpy(device):
    a = gpukit.eye(3, dtype="float16", device=device)
    with pytest.raises(TypeError, match="astype"):
        gpukit.linalg.inv(a)


# --- printing and interop ----------------------------------------------------

@pytest.mark.parametrize("values", [[1000.0, 1.5], [999.0, 1.5], [100.0, 0.3333], [65504, 1],
                                    [0.1, 1 / 3, 2 / 3], [math.nan, math.inf, -0.0, 1e-7],
                                    [70000.0, 1e-8], list(range(2000))])
def test_float16_repr_is_numpy(device, values):
    mine = repr(gpukit.asarray(values, dtype="float16", device=device))
    theirs = repr(np.array(values, dtype=np.float16))[:-1] + f", device={device})"
    if device != "cpu":  # a longer device name wraps the last line elsewhere
        mine, theirs = " ".join(mine.split()), " ".join(theirs.split())
    assert mine == theirs


def test_bfloat16_repr(device):
    a = gpukit.asarray([1, 2.5, 300, 1 / 3], dtype="bfloat16", device=device)
    assert " ".join(repr(a).split()) == ("array([1.00e+00, 2.50e+00, 3.00e+02, 3.34e-01], "
                                         f"dtype=bfloat16, device={device})")


def test_float16_buffer_and_numpy():
    x = np.array([1.5, -2.0, 65504.0, 6e-8], np.float16)
    a = gpukit.asarray(x)
    assert a.dtype == gpukit.float16 and memoryview(a).format == "e"
    back = np.asarray(a)
    assert back.dtype == np.float16 and np.array_equal(back, x)
    back[0] = 3.0  # zero-copy both ways
    assert a[0].item() == 3.0


def test_bfloat16_has_no_buffer_format_and_says_so():
    a = gpukit.ones(3, dtype="bfloat16")
    with pytest.raises(BufferError, match="bfloat16.*astype"):
        np.asarray(a)
    assert np.array_equal(np.asarray(a.astype("float32")), np.ones(3, np.float32))


@pytest.mark.parametrize("name", HALVES)
def test_dlpack_round_trip(device, name):
    a = gpukit.asarray([1.5, -2.0, 0.25], dtype=name, device=device)
    b = gpukit.from_dlpack(a)
    del a  # the consumer keeps the memory alive
    assert b.dtype == name and values_of(b).tolist() == [1.5, -2.0, 0.25]
    if device == "cpu" and name == "float16":
        same(np.from_dlpack(b), [1.5, -2.0, 0.25])
