"""gpukit.fft (python/fft.c, src/compute/fft.c, FFTW) against numpy.fft on
every device: each transform over dtypes, lengths (powers of two, primes,
odd), n cutting and padding, any axis, multi-dimensional s and axes, the
three norms, batches and empty batches; fftfreq, rfftfreq, fftshift and
ifftshift; and the errors (TypeError, ValueError, IndexError) each gives."""
import inspect

import numpy as np
import pytest

import gpukit as gk
from gpukit import fft

from conftest import host, on

RNG = np.random.default_rng(17)
NORMS = ["backward", "ortho", "forward"]


def signal(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def close(got, expected, single):
    got = host(got)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    kind = expected.dtype.kind
    want = {("c", True): np.complex64, ("c", False): np.complex128,
            ("f", True): np.float32, ("f", False): np.float64}[(kind, single)]
    assert got.dtype == want, (got.dtype, want)
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    tolerance = 1e-5 if single else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance * scale)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "float64"])
@pytest.mark.parametrize("length", [8, 7, 1, 30])
@pytest.mark.parametrize("norm", NORMS)
def test_fft_ifft(device, dtype, length, norm):
    x = signal((3, length), dtype)
    single = dtype in ("complex64", "float32")
    a = on(x, device)
    close(fft.fft(a, norm=norm), np.fft.fft(x, norm=norm), single)
    close(fft.ifft(a, norm=norm), np.fft.ifft(x, norm=norm), single)
    assert fft.fft(a).device == gk.device(device)


@pytest.mark.parametrize("n", [None, 5, 16])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_n_and_axis(device, n, axis):
    x = signal((6, 9), "complex128")
    a = on(x, device)
    close(fft.fft(a, n=n, axis=axis), np.fft.fft(x, n=n, axis=axis), False)
    close(fft.ifft(a, n=n, axis=axis, norm="ortho"), np.fft.ifft(x, n=n, axis=axis, norm="ortho"),
          False)
    r = x.real.copy()
    close(fft.rfft(on(r, device), n=n, axis=axis), np.fft.rfft(r, n=n, axis=axis), False)
    close(fft.irfft(a, n=n, axis=axis), np.fft.irfft(x, n=n, axis=axis), False)
    close(fft.hfft(a, n=n, axis=axis), np.fft.hfft(x, n=n, axis=axis), False)
    close(fft.ihfft(on(r, device), n=n, axis=axis), np.fft.ihfft(r, n=n, axis=axis), False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("length", [16, 15, 2])
@pytest.mark.parametrize("norm", NORMS)
def test_real_transforms(device, dtype, length, norm):
    x = signal((2, 3, length), dtype)
    single = dtype == "float32"
    spectrum = np.fft.rfft(x, norm=norm)
    close(fft.rfft(on(x, device), norm=norm), spectrum, single)
    close(fft.irfft(on(spectrum.astype(np.complex64 if single else np.complex128), device),
                    n=length, norm=norm), np.fft.irfft(spectrum, n=length, norm=norm), single)
    close(fft.ihfft(on(x, device), norm=norm), np.fft.ihfft(x, norm=norm), single)
    close(fft.hfft(on(spectrum.astype(np.complex64 if single else np.complex128), device),
                   norm=norm), np.fft.hfft(spectrum, norm=norm), single)


@pytest.mark.parametrize("s,axes", [(None, None), (None, (0, 2)), ((4, 6), (1, 2)),
                                    ((3, -1), (0, 1)), ((5,), None), (None, (2, 0)),
                                    ((2, 3, 4), None)])
@pytest.mark.parametrize("norm", NORMS)
def test_n_dimensional(device, s, axes, norm):
    x = signal((3, 4, 5), "complex128")
    r = x.real.copy()
    a, ra = on(x, device), on(r, device)
    # NumPy's s=None-with-axes and axes=None-with-s conventions, spelled out
    np_axes = axes if axes is not None else (None if s is None else tuple(range(-len(s), 0)))
    np_s = None if s is None else tuple(x.shape[ax] if v == -1 else v
                                        for v, ax in zip(s, np_axes))
    close(fft.fftn(a, s=s, axes=axes, norm=norm), np.fft.fftn(x, s=np_s, axes=np_axes, norm=norm),
          False)
    close(fft.ifftn(a, s=s, axes=axes, norm=norm),
          np.fft.ifftn(x, s=np_s, axes=np_axes, norm=norm), False)
    close(fft.rfftn(ra, s=s, axes=axes, norm=norm),
          np.fft.rfftn(r, s=np_s, axes=np_axes, norm=norm), False)
    # -1 for irfftn's last axis is its default, 2 * (m - 1) points
    irfft_s = np_s if s is None or s[-1] != -1 else np_s[:-1] + (2 * (x.shape[np_axes[-1]] - 1),)
    close(fft.irfftn(a, s=s, axes=axes, norm=norm),
          np.fft.irfftn(x, s=irfft_s, axes=np_axes, norm=norm), False)


def test_dtypes_follow_precision(device):
    ints = on(np.arange(8), device, "int32")
    assert fft.fft(ints).dtype == gk.complex128 and fft.rfft(ints).dtype == gk.complex128
    close(fft.fft(ints), np.fft.fft(np.arange(8)), False)
    halves = on(np.arange(8), device, "float16")
    assert fft.rfft(halves).dtype == gk.complex64
    assert fft.irfft(on(signal(5, "complex64"), device)).dtype == gk.float32
    assert fft.hfft(on(signal(5, "complex128"), device)).dtype == gk.float64


def test_large_threaded_and_repeated(device):
    """2^16 points run threaded; a second call reuses the plan and agrees."""
    x = signal((4, 1 << 14), "complex128")
    a = on(x, device)
    first = host(fft.fft(a))
    close(fft.fft(a), np.fft.fft(x), False)
    np.testing.assert_array_equal(host(fft.fft(a)), first)
    r = signal(3 * 5 * 7 * 11 * 13, "float64")  # no power of two at all
    close(fft.rfft(on(r, device)), np.fft.rfft(r), False)


def test_strided_and_empty_batches(device):
    x = signal((6, 8), "complex128")
    view = on(x, device)[::2, ::-1]
    close(fft.fft(view), np.fft.fft(x[::2, ::-1]), False)
    empty = on(np.zeros((0, 8)), device, "complex64")
    assert fft.fft(empty).shape == (0, 8) and fft.rfft(on(np.zeros((2, 0, 4)), device)).shape == (
        2, 0, 3)


def test_errors(device):
    z = on(signal(8, "complex128"), device)
    with pytest.raises(TypeError, match="real input"):
        fft.rfft(z)
    with pytest.raises(TypeError, match="real input"):
        fft.ihfft(z)
    with pytest.raises(ValueError, match="norm"):
        fft.fft(z, norm="none")
    # None: NumPy's spelling of the default, which wrappers pass on
    np.testing.assert_array_equal(host(fft.ifft(z, norm=None)), host(fft.ifft(z)))
    with pytest.raises(ValueError, match="at least 1"):
        fft.fft(z, n=0)
    with pytest.raises(ValueError, match="at least one"):
        fft.fft(on(np.zeros(0), device, "complex64"))
    with pytest.raises(ValueError, match="at least one"):
        fft.irfft(on(np.ones(1), device, "complex64"))  # 2 * (1 - 1) points
    with pytest.raises(IndexError, match="out of range"):
        fft.fft(z, axis=1)
    with pytest.raises(ValueError, match="twice"):
        fft.fftn(on(np.ones((2, 2)), device), axes=(0, 0))
    with pytest.raises(ValueError, match="2 entries for 1 axes"):
        fft.fftn(on(np.ones((2, 2)), device), s=(2, 2), axes=(0,))
    with pytest.raises(TypeError, match="n must be an int"):
        fft.fft(z, n=2.5)
    # -1 means "the axis as it is" only in s, as NumPy has it
    for transform in (fft.fft, fft.ifft, fft.rfft, fft.irfft, fft.hfft, fft.ihfft):
        with pytest.raises(ValueError, match="n = -1 points"):
            transform(on(signal(8, "float64"), device), n=-1)
    assert fft.fftn(z, s=(-1,)).shape == (8,)
    with pytest.raises(TypeError, match="axis must be an int"):
        fft.fft(z, axis=(0,))
    # a 0-d integer array is an int, as in NumPy
    for zero_d in (np.array(0), gk.asarray(0)):
        assert fft.fft(z, axis=zero_d).shape == (8,)
        assert fft.fftshift(z, axes=zero_d).shape == (8,)
    assert fft.fft(z, n=np.array(4)).shape == (4,)
    # more axes than dimensions: an axis out of range, as NumPy says
    with pytest.raises(IndexError, match="out of range"):
        fft.fft(on(np.array(1 + 0j), device))
    with pytest.raises(IndexError, match="out of range"):
        fft.fftn(on(np.ones((2, 2)), device), axes=(0, 1, 2))
    with pytest.raises(IndexError, match="out of range"):
        fft.fftshift(on(np.array(1.0), device), axes=0)


@pytest.mark.parametrize("n", [1, 2, 7, 10])
def test_frequencies_and_shifts(device, n):
    freq = fft.fftfreq(n, d=0.25, dtype=gk.float64, device=device)
    assert freq.device == gk.device(device)
    np.testing.assert_allclose(host(freq), np.fft.fftfreq(n, 0.25), rtol=1e-15)
    np.testing.assert_allclose(host(fft.rfftfreq(n, d=2.0, dtype=gk.float64, device=device)),
                               np.fft.rfftfreq(n, 2.0), rtol=1e-15)
    assert fft.fftfreq(n).dtype == gk.float32  # the default real floating dtype
    x = np.arange(n * 3).reshape(3, n)
    a = on(x, device)
    for axes in (None, 0, (1,), [0, 1], (-1, 0), np.int64(1), np.array([1, 0])):
        np.testing.assert_array_equal(host(fft.fftshift(a, axes=axes)), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(host(fft.ifftshift(a, axes=axes)), np.fft.ifftshift(x, axes))
    with pytest.raises(ValueError, match="at least 1"):
        fft.fftfreq(0)
    with pytest.raises(ZeroDivisionError, match="d is 0"):
        fft.fftfreq(n, d=0)
    # more points than memory holds: refused before anything is written
    with pytest.raises(ValueError, match="too many"):
        fft.fftfreq(1 << 61, device=device)
    with pytest.raises(ValueError, match="too many"):
        fft.rfftfreq(1 << 62, device=device)
    with pytest.raises(TypeError, match="real floating"):
        fft.fftfreq(4, dtype=gk.int32)


def test_names_and_signatures():
    expected = {"fft": "(x, /, *, n=None, axis=-1, norm='backward')",
                "fftn": "(x, /, *, s=None, axes=None, norm='backward')",
                "fftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
                "fftshift": "(x, /, *, axes=None)"}
    for name, signature in expected.items():
        assert str(inspect.signature(getattr(fft, name))) == signature
    assert sorted(fft.__all__) == sorted(
        ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
         "fftfreq", "rfftfreq", "fftshift", "ifftshift"])
    for name in fft.__all__:
        assert getattr(fft, name).__doc__, name
