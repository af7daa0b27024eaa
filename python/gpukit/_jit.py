"""Kernels written in Python: ``@gpukit.jit``, Numba's ``@cuda.jit`` for every device.

::

    @gpukit.jit
    def double(x):
        i = gpukit.grid(1)
        if i < x.size:
            x[i] = x[i] * 2

    double[blocks, threads](x)          # x: a gpukit array on cpu, cuda or opencl
    double.forall(x.size)(x)            # the launch size chosen for you

The function's body is translated to gpukit's portable kernel dialect for
the arguments' dtypes and ndim (and the scalars' types), compiled for the
arrays' device and cached in memory and on disk. The Python it takes, the
index helpers below and what fails how are in docs/KERNELS.md. The
translation and the launch are in C (``_gpukit.JitKernel``); this module
holds the decorator and the names kernels call, which do nothing outside
a kernel.
"""
from ._gpukit import JitKernel, JitLaunch, Vectorize, asarray

__all__ = [
    "jit", "grid", "gridsize", "syncthreads", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "shared", "atomic", "to_device", "vectorize", "JitKernel", "JitLaunch", "Vectorize",
]


def jit(function=None, *, device=False):
    """Makes a Python function a kernel (``device=True``: a function kernels call).

    Use it bare (``@gpukit.jit``) or with options (``@gpukit.jit(device=True)``).
    """
    if function is None:
        return lambda f: JitKernel(f, device)
    return JitKernel(function, device)


def vectorize(signatures=None):
    """Makes a scalar Python function elementwise over arrays (Numba's ``@vectorize``).

    ``@gpukit.vectorize(["float32(float32, float32)", "float64(float64, float64)"])``
    compiles for the first signature the inputs cast to safely; bare
    ``@gpukit.vectorize`` takes the inputs' dtypes as they come. The result
    broadcasts its inputs and runs on their device (``out=`` writes into an
    array).
    """
    if callable(signatures):
        return Vectorize(signatures, None)
    if isinstance(signatures, str):
        signatures = [signatures]
    return lambda function: Vectorize(function, signatures)


def to_device(array, device=None):
    """A copy of `array` (NumPy or anything ``asarray`` takes) on `device`
    (None: the default device), Numba's ``cuda.to_device``; ``.copy_to_host()``
    brings it back as a NumPy array."""
    return asarray(array, device=device, copy=True)


def _outside(name):
    raise RuntimeError(f"gpukit.{name} works only inside a @gpukit.jit kernel")


def grid(ndim):
    """The absolute index of this thread: an int for ndim 1, else a tuple."""
    _outside("grid")


def gridsize(ndim):
    """How many threads the whole grid has along each dimension."""
    _outside("gridsize")


def syncthreads():
    """Waits until every thread of the block reaches this point."""
    _outside("syncthreads")


class _Dim3:
    """threadIdx, blockIdx, blockDim, gridDim: read .x, .y, .z in a kernel."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"gpukit.{self._name}"


threadIdx = _Dim3("threadIdx")
blockIdx = _Dim3("blockIdx")
blockDim = _Dim3("blockDim")
gridDim = _Dim3("gridDim")


class _Shared:
    """gpukit.shared.array(shape, dtype): memory shared by a block's threads."""

    @staticmethod
    def array(shape, dtype):
        """A block's shared array of a constant shape."""
        _outside("shared.array")


class _Atomic:
    """Atomic read-modify-write of one array element; each returns the old value."""

    @staticmethod
    def add(array, index, value):
        """array[index] += value, atomically."""
        _outside("atomic.add")

    @staticmethod
    def max(array, index, value):
        """array[index] = max(array[index], value), atomically."""
        _outside("atomic.max")

    @staticmethod
    def min(array, index, value):
        """array[index] = min(array[index], value), atomically."""
        _outside("atomic.min")


shared = _Shared()
atomic = _Atomic()

# Documented as gpukit's own (help(gpukit), Sphinx), where users find them.
for _function in (jit, vectorize, grid, gridsize, syncthreads, to_device):
    _function.__module__ = "gpukit"


def _find(module, qualname):
    """The kernel a pickle names by reference (JitKernel.__reduce__)."""
    import importlib

    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found

# What the translator recognises, by identity.
_INTRINSICS = {
    "grid": grid, "gridsize": gridsize, "syncthreads": syncthreads,
    "threadIdx": threadIdx, "blockIdx": blockIdx, "blockDim": blockDim, "gridDim": gridDim,
    "shared.array": _Shared.array,
    "atomic.add": _Atomic.add, "atomic.max": _Atomic.max, "atomic.min": _Atomic.min,
}
