"""gpukit.cuda: torch.cuda's questions, answered without touching CUDA.

``is_available()``, ``device_count()``, ``get_device_name()`` and
``mem_get_info()`` answer from the NVIDIA driver's management library (NVML)
and the CUDA view of this process: which GPUs CUDA_VISIBLE_DEVICES and
CUDA_DEVICE_ORDER let CUDA programs see, numbered as they will number them.
They never load the CUDA driver (libcuda), so calling them creates no CUDA
context, takes no GPU memory, and leaves CUDA_VISIBLE_DEVICES free to be set
afterwards (by ``gpukit.reserve()``) before anything initialises CUDA.

A device is an int N, "cuda:N", "cuda" or a ``gpukit.device``; None means
cuda:0. A number this process cannot see raises ``gpukit.GPUError`` (a
RuntimeError, as torch raises for an invalid device id).
"""
from ._gpukit import (
    _cuda_device_count,
    _cuda_get_device_name,
    _cuda_is_available,
    _cuda_mem_get_info,
)

__all__ = ["is_available", "device_count", "get_device_name", "mem_get_info"]


def is_available():
    """Whether CUDA programs of this process would see at least one GPU.

    False when there is no GPU or driver (NVML, or the CUDA driver library
    libcuda.so.1, which is looked for but not loaded), and when
    CUDA_VISIBLE_DEVICES hides every GPU. A sleeping laptop GPU counts (it wakes on first use) and is
    not woken to answer."""
    return _cuda_is_available()


def device_count():
    """How many devices CUDA programs of this process see (cuda:0 ...); 0
    without the CUDA driver library, as is_available() says."""
    return _cuda_device_count()


def get_device_name(device=None):
    """The name of a CUDA device, e.g. 'NVIDIA H100 80GB HBM3' (a MIG
    device's own name when CUDA_VISIBLE_DEVICES names one)."""
    return _cuda_get_device_name(device)


def mem_get_info(device=None):
    """(free, total) memory of a CUDA device in bytes, as the driver counts
    it now (what torch.cuda.mem_get_info returns, without a CUDA context)."""
    return _cuda_mem_get_info(device)
