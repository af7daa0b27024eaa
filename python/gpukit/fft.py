"""gpukit.fft: the array API's fft extension (2025.12).

Discrete Fourier transforms of any length (not only powers of two) over any
axes, with n / s, axis / axes and norm as the standard and NumPy have them.
They run through cuFFT on CUDA devices that have it, else on the CPU
through FFTW (loaded at run time; install libfftw3-double3 and
libfftw3-single3): OpenCL arrays are copied there and the result back. complex64 and float32 input
compute in single precision (float16 too), the rest in double; the results
keep that precision, as the standard asks (NumPy 2 does the same).

norm: "backward" (the default) scales the inverse transform by 1/n,
"forward" the forward one, "ortho" both by 1/sqrt(n).
"""
from . import _gpukit

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

# gk_fft_kind
_FORWARD, _BACKWARD, _REAL_FORWARD, _REAL_BACKWARD, _HERMITIAN_FORWARD, _HERMITIAN_BACKWARD = \
    range(6)


def _one_axis(kind, x, n, axis, norm):
    return _gpukit._fft(x, kind, n, axis, norm, True)


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform along axis.

    n points are transformed (the input cut or zero-padded to n; None: its
    length). The result is complex.
    """
    return _one_axis(_FORWARD, x, n, axis, norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of fft along axis (n as fft's)."""
    return _one_axis(_BACKWARD, x, n, axis, norm)


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The fft of real x: the n // 2 + 1 non-negative frequencies (complex x is a TypeError)."""
    return _one_axis(_REAL_FORWARD, x, n, axis, norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: n real points (None: 2 * (m - 1) from x's m along axis)."""
    return _one_axis(_REAL_BACKWARD, x, n, axis, norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The real spectrum of a signal with Hermitian symmetry given by its first half.

    n output points (None: 2 * (m - 1)); irfft of conj(x) with the scaling
    the other way round.
    """
    return _one_axis(_HERMITIAN_FORWARD, x, n, axis, norm)


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of hfft: the n // 2 + 1 points of the Hermitian half, from real x."""
    return _one_axis(_HERMITIAN_BACKWARD, x, n, axis, norm)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform over axes.

    axes None: every axis, or the last len(s) when s is given; s: the points
    along each (-1: the axis as it is).
    """
    return _gpukit._fft(x, _FORWARD, s, axes, norm, False)


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of fftn (s and axes as fftn's)."""
    return _gpukit._fft(x, _BACKWARD, s, axes, norm, False)


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """fftn of real x, the last axis halved to its n // 2 + 1 non-negative frequencies."""
    return _gpukit._fft(x, _REAL_FORWARD, s, axes, norm, False)


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of rfftn: real output (the last axis 2 * (m - 1) points unless s says)."""
    return _gpukit._fft(x, _REAL_BACKWARD, s, axes, norm, False)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point fft with sample spacing d.

    [0, 1, ..., n/2 - 1, -n/2, ..., -1] / (d * n) (n even; odd n ends at
    -(n - 1) / 2), in dtype (a real floating one; None: the default, float32)
    on device.
    """
    return _gpukit._fftfreq(n, d, False, dtype, device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The n // 2 + 1 non-negative sample frequencies of an n-point rfft: [0, 1, ...] / (d * n)."""
    return _gpukit._fftfreq(n, d, True, dtype, device)


def fftshift(x, /, *, axes=None):
    """x with the zero-frequency term moved to the middle of each of axes (None: all)."""
    return _gpukit._fftshift(x, axes, False)


def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift."""
    return _gpukit._fftshift(x, axes, True)
