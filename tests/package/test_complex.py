"""complex64 and complex128 against NumPy 2 on every device (the CPU's
loops over glibc, the GPU kernels over kernels/complex.h): creation and
interop, conversions, arithmetic, the standard's complex functions over
special values (zeros of both signs, infinities and NaN in each part),
reductions, running products, sorting in NumPy's order, matmul and vecdot,
printing; the refusals the standard asks for (ordering, rounding down,
remainder ...) as TypeError. A device without double precision refusing
complex128 is test_dtypes.py's test_a_device_without_float64_says_so."""
import itertools
import math
import warnings

import numpy as np
import pytest

import gpukit
from conftest import DEVICES

COMPLEX = ["complex64", "complex128"]
PARTS = [0.0, -0.0, 1.0, -2.5, 0.5, math.inf, -math.inf, math.nan, 1e-3, 7.0]
SPECIAL = np.array([complex(r, i) for r, i in itertools.product(PARTS, PARTS)])
RNG = np.random.default_rng(0)
RANDOM = RNG.normal(size=200) * 3 + 1j * RNG.normal(size=200) * 3


def values(dtype):
    return np.concatenate([SPECIAL, RANDOM]).astype(dtype)


def host(x):
    """An Array's elements as NumPy's, through tolist() (Python complex)."""
    assert type(x) is gpukit.Array
    return np.array(x.tolist(), dtype=str(x.dtype)).reshape(x.shape)


def same(got, expected, rtol=0.0):
    """Equal element for element (each part: NaN matches NaN, infinities
    and, when exact, the sign of zero), or within rtol of max(1, |e|)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    parts = [(np.real, "real")]
    if np.iscomplexobj(expected):
        parts.append((np.imag, "imag"))
    for part, name in parts:
        g, e = part(got).astype(np.float64), part(expected).astype(np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(e)), name
        finite = np.isfinite(e)
        assert np.array_equal(g[~finite & ~np.isnan(e)], e[~finite & ~np.isnan(e)]), name
        if rtol == 0:
            assert np.array_equal(g[finite], e[finite]), name
            assert np.array_equal(np.signbit(g[finite]), np.signbit(e[finite])), name
        else:
            error = np.abs(g[finite] - e[finite]) / np.maximum(1.0, np.abs(e[finite]))
            assert error.max(initial=0) <= rtol, (name, error.max())


def tolerance(dtype):
    return 4e-6 if dtype == "complex64" else 1e-13


# --- dtypes, creation, interop ----------------------------------------------

def test_dtypes_and_promotion():
    assert gpukit.complex64 == np.complex64 and gpukit.complex128 == "complex128"
    assert gpukit.complex64.kind == "c" and gpukit.complex128.itemsize == 16
    assert gpukit.isdtype(gpukit.complex64, "complex floating")
    assert not gpukit.isdtype(gpukit.complex64, "real floating")
    for other in ["bool", "int8", "int16", "int32", "uint64", "float16", "float32", "float64",
                  "complex64", "complex128"]:
        for c in COMPLEX:
            assert gpukit.result_type(c, other) == np.result_type(c, other), (c, other)
            assert gpukit.can_cast(other, c) == np.can_cast(other, c), (other, c)
            assert gpukit.can_cast(c, other) == np.can_cast(c, other), (c, other)
    assert gpukit.finfo(gpukit.complex64).eps == np.finfo(np.complex64).eps


def test_python_scalars_are_weak():
    f32 = gpukit.ones(3, dtype="float32")
    assert (f32 + 1j).dtype == gpukit.complex64
    assert (gpukit.ones(3, dtype="int32") + 1j).dtype == gpukit.complex128
    assert (gpukit.ones(3, dtype="float64") * 2j).dtype == gpukit.complex128
    assert (gpukit.asarray([1j], dtype="complex64") + 2.5).dtype == gpukit.complex64


@pytest.mark.parametrize("dtype", COMPLEX)
def test_round_trips(dtype):
    x = values(dtype)
    a = gpukit.asarray(x)
    assert a.dtype == dtype
    same(np.asarray(a), x)                        # buffer protocol, zero copy
    same(host(a), x)                              # tolist(): Python complex
    same(host(gpukit.asarray(x.tolist(), dtype=dtype)), x)
    same(np.from_dlpack(a), x)
    same(host(gpukit.from_dlpack(x)), x)
    assert memoryview(a).format == ("Zf" if dtype == "complex64" else "Zd")
    assert complex(a[3]) == complex(x[3]) and a[3].item() == complex(x[3])
    assert isinstance(a[0].item(), complex)
    # NumPy's repr, with the dtype always shown (NumPy leaves out complex128's)
    assert repr(gpukit.asarray(np.array([1 + 2j, 3 - 4j], dtype))) == \
        f"array([1.+2.j, 3.-4.j], dtype={dtype}, device=cpu)"
    assert repr(gpukit.asarray(np.array([1.5 - 0.25j, np.nan + 1j], dtype))) == \
        repr(np.array([1.5 - 0.25j, np.nan + 1j], dtype)).replace(
            ", dtype=complex64)", ")")[:-1] + f", dtype={dtype}, device=cpu)"


@pytest.mark.parametrize("dtype", COMPLEX)
def test_devices_hold_and_move_complex(device, dtype):
    x = values(dtype)
    a = gpukit.asarray(x, device=device)
    assert a.dtype == dtype and str(a.device) == device
    same(host(a), x)
    same(host(a.to("cpu")), x)
    same(host(gpukit.asarray(x.tolist(), dtype=dtype, device=device)), x)
    same(host(gpukit.full(3, 1.5 - 2j, dtype=dtype, device=device)), np.full(3, 1.5 - 2j, dtype))
    same(host(gpukit.zeros((2, 2), dtype=dtype, device=device)), np.zeros((2, 2), dtype))
    assert complex(a[3]) == complex(x[3])
    # moves: where, masks, take, concat, flip (16-byte elements move as pairs)
    mask = np.isfinite(x.real)
    same(host(a[gpukit.asarray(mask, device=device)]), x[mask])
    same(host(gpukit.where(gpukit.asarray(mask, device=device), a, -a)),
         np.where(mask, x, -x))
    order = RNG.permutation(len(x))
    same(host(gpukit.take(a, gpukit.asarray(order, device=device))), x[order])
    same(host(gpukit.concat([a, a[::-3]])), np.concatenate([x, x[::-3]]))
    b = gpukit.asarray(x, device=device)
    b[gpukit.asarray(order[:5], device=device)] = 7 - 1j
    y = x.copy()
    y[order[:5]] = 7 - 1j
    same(host(b), y)
    info = gpukit.__array_namespace_info__()
    assert dtype in info.dtypes(device=device)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("target", ["bool", "int32", "float32", "float64", "complex64",
                                    "complex128"])
def test_conversions(device, dtype, target):
    x = np.concatenate([RANDOM, [0, -0.0, 1j, 2 + 0j]]).astype(dtype)
    got = gpukit.astype(gpukit.asarray(x, device=device), target)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        expected = x.astype(target)
    same(host(got), expected)
    real = RNG.normal(size=50).astype("float32")
    same(host(gpukit.astype(gpukit.asarray(real, device=device), dtype)), real.astype(dtype))


# --- elementwise -------------------------------------------------------------

EXACT_BINARY = {"add": np.add, "subtract": np.subtract, "equal": np.equal,
                "not_equal": np.not_equal}
EXACT_UNARY = {"negative": np.negative, "positive": np.positive, "conj": np.conj,
               "real": np.real, "imag": np.imag, "isnan": np.isnan, "isinf": np.isinf,
               "isfinite": np.isfinite, "square": np.square}
MATH_UNARY = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log1p": np.log1p,
              "log2": np.log2, "log10": np.log10, "expm1": np.expm1, "sin": np.sin,
              "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
              "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
              "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
              "abs": np.abs, "reciprocal": np.reciprocal, "sign": np.sign}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(EXACT_BINARY))
def test_exact_binary(device, dtype, name):
    x = values(dtype)
    y = RNG.permutation(x)
    with np.errstate(all="ignore"):
        expected = EXACT_BINARY[name](x, y)
    same(host(getattr(gpukit, name)(gpukit.asarray(x, device=device), gpukit.asarray(y, device=device))), expected)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_multiply(device, dtype):
    # NumPy's infinities and NaNs (C99 Annex G's), the finite products
    # within an ulp: gpukit's AVX2 loops fuse a*c - b*d into an FMA
    x = values(dtype)
    y = RNG.permutation(x)
    with np.errstate(all="ignore"):
        expected = x * y
    same(host(gpukit.asarray(x, device=device) * gpukit.asarray(y, device=device)), expected, rtol=tolerance(dtype))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_divide_and_pow_on_finite_values(device, dtype):
    x = RANDOM.astype(dtype)
    y = RNG.permutation(x)
    a, b = gpukit.asarray(x, device=device), gpukit.asarray(y, device=device)
    same(host(a / b), x / y, rtol=tolerance(dtype))
    same(host(a ** gpukit.asarray(np.full(x.shape, 2 + 0j, dtype), device=device)), x ** 2, rtol=tolerance(dtype) * 4)
    same(host(gpukit.pow(a, b)), np.power(x, y), rtol=tolerance(dtype) * 100)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_pow_special_values(device, dtype):
    # NumPy's: 0 ** y is 0 where Re(y) > 0 (else NaN); x ** 1 is x and
    # x ** 2, x ** 3 plain products, so infinities keep NumPy's parts
    x = values(dtype)
    for y in [1 + 1j, 0.5 - 2j, 1, 2, 3, 4, -1, -2, 1e-3j, -1 + 1j, 0]:
        exponent = np.full(x.shape, y, dtype)
        with np.errstate(all="ignore"):
            expected = np.power(x, exponent)
        got = host(gpukit.pow(gpukit.asarray(x, device=device),
                              gpukit.asarray(exponent, device=device)))
        special = ~np.isfinite(x) | (x == 0)
        same(got[special], expected[special])  # exactly, NaN for NaN


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(EXACT_UNARY))
def test_exact_unary(device, dtype, name):
    x = values(dtype)
    with np.errstate(all="ignore"):
        expected = np.asarray(EXACT_UNARY[name](x))
    got = getattr(gpukit, name)(gpukit.asarray(x, device=device))
    same(host(got), expected if name != "square" else expected, rtol=0 if name != "square"
         else tolerance(dtype))


# Where NumPy departs from the standard's special cases, the standard's
# values (x -> result); NumPy is compared on the other inputs.
STANDARD_NOT_NUMPY = {
    "expm1": [(complex(math.inf, 0.0), complex(math.inf, 0.0)),
              (complex(-math.inf, math.inf), complex(-1.0, 0.0)),
              (complex(math.inf, math.inf), complex(math.inf, math.nan)),
              (complex(math.inf, math.nan), complex(math.inf, math.nan))],
    "sign": [(complex(math.inf, math.nan), complex(math.nan, math.nan)),
             (complex(math.nan, math.inf), complex(math.nan, math.nan)),
             (complex(0.0, -0.0), complex(0.0, 0.0))],
}


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(STANDARD_NOT_NUMPY))
def test_standard_special_cases_numpy_misses(device, dtype, name):
    cases = STANDARD_NOT_NUMPY[name]
    got = getattr(gpukit, name)(gpukit.asarray(np.array([c[0] for c in cases], dtype), device=device))
    for (x, expected), value in zip(cases, got.tolist()):
        for part in ("real", "imag"):
            g, e = getattr(value, part), getattr(expected, part)
            assert (math.isnan(g) and math.isnan(e)) or g == e, (name, x, value, expected)
        if math.isfinite(expected.real):
            assert abs(value.imag) == 0 or math.isnan(expected.imag) or \
                value.imag == expected.imag


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sign_where_abs_overflows(device, dtype):
    # finite parts whose |x| overflows still have the direction x / |x|
    # (the result had zero parts); NumPy 2.4 gives 0 + 1j for all of these
    big = np.finfo(dtype).max
    x = np.array([complex(big, big), complex(-big, big / 3), complex(big / 2, -big),
                  complex(big, -1e-30)], dtype)
    got = host(gpukit.sign(gpukit.asarray(x, device=device)))
    half = x.astype("complex128") / 4
    same(got, (half / np.abs(half)).astype(dtype), rtol=tolerance(dtype))
    assert np.signbit(got[3].imag)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_atanh_and_atan_near_the_largest_finite(device, dtype):
    # atanh z ~ 1/z + i pi/2: 1/z is subnormal there and must not be 0 (the
    # device kernels' |z|^2 / |z| overflowed); NumPy's (glibc's) values
    big = np.finfo(dtype).max
    x = np.array([complex(big, big), complex(-big, big), complex(big / 3, -big),
                  complex(big, big / 3)], dtype)
    for name, reference in (("atanh", np.arctanh), ("atan", np.arctan)):
        got = host(getattr(gpukit, name)(gpukit.asarray(x, device=device)))
        expected = reference(x)
        same(got, expected, rtol=tolerance(dtype))  # the parts near pi/2
        part = np.real if name == "atanh" else np.imag  # 1/z's share, subnormal
        tiny, expected_tiny = part(got), part(expected)
        assert np.all(expected_tiny != 0)
        error = np.abs(tiny.astype(float) - expected_tiny) / np.abs(expected_tiny)
        assert error.max() < 1e-5, (name, got, expected)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(MATH_UNARY))
def test_math_functions(device, dtype, name):
    # random values: within the precision; special values: NumPy's (C99
    # Annex G's) infinities, NaNs and zeros, the finite parts within the
    # precision too. Where NumPy departs from the standard (expm1 and sign
    # with an infinite or NaN part) the standard's cases are checked above.
    x = values(dtype)
    if name in STANDARD_NOT_NUMPY:
        x = x[np.isfinite(x.real) & np.isfinite(x.imag)]
    with np.errstate(all="ignore"):
        expected = np.asarray(MATH_UNARY[name](x))
    got = getattr(gpukit, name)(gpukit.asarray(x, device=device))
    assert got.dtype == expected.dtype
    same(host(got), expected, rtol=tolerance(dtype) * 8)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_layouts(device, dtype):
    x = RANDOM[:48].astype(dtype).reshape(6, 8)
    a = gpukit.asarray(x, device=device)
    same(host(a[::-2, 1::3] - a[::-2, 1::3].T.T), x[::-2, 1::3] - x[::-2, 1::3])
    same(host(a[::-2, 1::3] * a[::-2, 1::3]), x[::-2, 1::3] * x[::-2, 1::3],
         rtol=tolerance(dtype))
    same(host(a + a[0]), x + x[0])
    same(host(gpukit.exp(a.T)), np.exp(x.T), rtol=tolerance(dtype) * 8)
    same(host(gpukit.real(a)[1:]), np.real(x)[1:])
    e = gpukit.asarray(np.zeros((0, 3), dtype), device=device)
    assert (e * e).shape == (0, 3) and gpukit.sum(e).item() == 0
    z = gpukit.asarray(np.complex128(1 + 2j).astype(dtype), device=device)
    assert z.ndim == 0 and complex(z * z) == complex(np.asarray(1 + 2j, dtype) ** 2)


@pytest.mark.parametrize("name", ["less", "greater_equal", "maximum", "minimum", "floor",
                                  "ceil", "trunc", "remainder", "floor_divide", "atan2",
                                  "signbit", "logaddexp", "searchsorted"])
def test_refused_as_the_standard_says(device, name):
    a = gpukit.asarray([1 + 1j, 2 - 1j], device=device)
    function = getattr(gpukit, name)
    with pytest.raises(TypeError, match="complex"):
        function(a, a) if name in ("less", "greater_equal", "maximum", "minimum", "remainder",
                                   "floor_divide", "atan2", "logaddexp", "searchsorted") \
            else function(a)


# --- reductions and products -------------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_reductions(device, dtype):
    x = RANDOM.astype(dtype).reshape(10, 20)
    a = gpukit.asarray(x, device=device)
    for name in ("sum", "mean", "prod"):
        rtol = tolerance(dtype) * (100 if name == "prod" else 10)
        same(host(getattr(gpukit, name)(a)), np.asarray(getattr(np, name)(x)), rtol=rtol)
        same(host(getattr(gpukit, name)(a, axis=1)), getattr(np, name)(x, axis=1), rtol=rtol)
        same(host(getattr(gpukit, name)(a, axis=0)), getattr(np, name)(x, axis=0), rtol=rtol)
    for name in ("max", "argmin", "std"):
        with pytest.raises(TypeError):
            getattr(gpukit, name)(a)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_matmul_and_vecdot(device, dtype):
    x = (RNG.normal(size=(7, 5)) + 1j * RNG.normal(size=(7, 5))).astype(dtype)
    y = (RNG.normal(size=(5, 3)) + 1j * RNG.normal(size=(5, 3))).astype(dtype)
    rtol = tolerance(dtype) * 10
    same(host(gpukit.matmul(gpukit.asarray(x, device=device), gpukit.asarray(y, device=device))), x @ y, rtol=rtol)
    # vecdot conjugates its first argument (the standard's, NumPy's)
    same(host(gpukit.vecdot(gpukit.asarray(x, device=device), gpukit.asarray(x, device=device))), np.vecdot(x, x), rtol=rtol)


# --- sorting, sets, running products ------------------------------------------

@pytest.mark.parametrize("dtype", COMPLEX)
def test_sort_is_numpys_order(device, dtype):
    # NumPy's: by real part, then imaginary part, NaN last in each
    x = np.concatenate([values(dtype), values(dtype)[::6]]).reshape(-1, 10)
    a = gpukit.asarray(x, device=device)
    same(host(gpukit.sort(a)), np.sort(x, kind="stable"))
    same(host(gpukit.argsort(a)), np.argsort(x, kind="stable"))
    # descending and stable: equal values (0 and -0) keep their order
    same(host(gpukit.sort(a, axis=0, descending=True)),
         np.flip(np.sort(np.flip(x, axis=0), axis=0, kind="stable"), axis=0))
    flat = x.ravel()
    finite = flat[np.isfinite(flat)]
    u = gpukit.unique_all(gpukit.asarray(finite, device=device))
    expected = np.unique(finite, return_index=True, return_inverse=True, return_counts=True)
    same(host(u.values), expected[0])
    same(host(u.counts), expected[3])
    # (0 and -0 are one unique value)
    np.testing.assert_array_equal(host(u.values)[host(u.inverse_indices)], finite)
    same(host(gpukit.unique_values(gpukit.asarray(finite, device=device))), expected[0])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_cumulative_prod(device, dtype):
    x = (RANDOM[:60] / 3).astype(dtype).reshape(3, 20)
    a = gpukit.asarray(x, device=device)
    rtol = tolerance(dtype) * 100
    same(host(gpukit.cumulative_prod(a, axis=1)), np.cumprod(x, axis=1), rtol=rtol)
    same(host(gpukit.cumulative_prod(a, axis=0)), np.cumprod(x, axis=0), rtol=rtol)
    same(host(gpukit.cumulative_prod(a[0], include_initial=True)),
         np.concatenate([[1], np.cumprod(x[0])]).astype(dtype), rtol=rtol)
    assert gpukit.cumulative_prod(gpukit.asarray(np.zeros(0, dtype), device=device)).shape == (0,)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sequences(device, dtype):
    same(host(gpukit.arange(0, 5, 0.5, dtype=dtype, device=device)),
         np.arange(0, 5, 0.5, dtype=dtype))
    same(host(gpukit.linspace(-1, 2, 7, dtype=dtype, device=device)),
         np.linspace(-1, 2, 7, dtype=dtype))


GPUS = [d for d in DEVICES if d != "cpu"]


@pytest.mark.skipif(not GPUS, reason="needs a CUDA or OpenCL device (PoCL in CI)")
@pytest.mark.parametrize("device", GPUS)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_user_kernels_see_the_parts(device, dtype):
    # a complex parameter is dialect.h's gk_c64 / gk_c128: parts .re, .im
    swap = gpukit.ElementwiseKernel(f"{dtype} z", f"{dtype} w", "w.re = z.im; w.im = z.re;",
                                    f"swap_{dtype}")
    x = RANDOM[:20].astype(dtype)
    same(host(swap(gpukit.asarray(x, device=device))), (x.imag + 1j * x.real).astype(dtype))
