"""gpukit: get your work onto the right NVIDIA GPU, and compute there.

GPUs and reservations::

    gpukit.gpus()                      # every GPU now: memory, utilization, processes
    with gpukit.reserve(min_free="20G"):
        ...                            # CUDA programs started here see only that GPU

Arrays and kernels on the CPU, CUDA GPUs and OpenCL devices::

    device = "cuda" if gpukit.cuda.is_available() else "cpu"
    x = gpukit.random.normal((1024, 1024), seed=0, device=device)
    y = (x @ x.T).sum(axis=0).cpu().numpy()

The array functions follow the Python array API standard
(__array_api_version__, "2025.12"), with its constants e, pi, inf, nan
(Python floats) and newaxis (None, for indexing).

The work is done by libgpukit, in C; this package is a thin layer over it.
"""
from ._gpukit import *  # noqa: F401,F403  (the C extension's public names)
from ._gpukit import __array_api_version__, __array_namespace_info__, __version__  # noqa: F401
from . import cuda, fft, linalg, random  # noqa: F401
from ._monitor import Monitor, monitor  # noqa: F401  (the live view in a notebook)
from ._jit import (  # noqa: F401  (@gpukit.jit and the names its kernels call)
    atomic,
    blockDim,
    blockIdx,
    grid,
    gridDim,
    gridsize,
    jit,
    shared,
    syncthreads,
    threadIdx,
    to_device,
    vectorize,
)
