"""gpukit.cuda: torch.cuda's questions, answered without touching CUDA.

``is_available()``, ``device_count()``, ``get_device_name()`` and
``mem_get_info()`` answer from the NVIDIA driver's management library (NVML)
and the CUDA view of this process: which GPUs CUDA_VISIBLE_DEVICES and
CUDA_DEVICE_ORDER let CUDA programs see, numbered as they will number them.
They never load the CUDA driver (libcuda), so calling them creates no CUDA
context, takes no GPU memory, and leaves CUDA_VISIBLE_DEVICES free to be set
afterwards (by ``gpukit.reserve()``) before anything initialises CUDA.

``memory_allocated()``, ``max_memory_allocated()``, ``memory_reserved()``,
``reset_peak_memory_stats()`` and ``empty_cache()`` are torch.cuda's names for
what gpukit's own arrays hold of a GPU (``gpukit.device.memory_stats()``);
they start no GPU either (one never used holds nothing).

A device is an int N, "cuda:N", "cuda" or a ``gpukit.device``; None means
cuda:0. A number this process cannot see raises ``gpukit.GPUError`` (a
RuntimeError, as torch raises for an invalid device id).
"""
from ._gpukit import (
    _cuda_device_count,
    _cuda_get_device_name,
    _cuda_is_available,
    _cuda_mem_get_info,
    GPUError as _GPUError,
    device as _device,
)

__all__ = [
    "is_available",
    "device_count",
    "get_device_name",
    "mem_get_info",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "empty_cache",
]


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


def _cuda_device(device):
    """The gpukit.device a torch.cuda-style argument names (GPUError for a
    number this process cannot see, found without starting CUDA)."""
    if device is None:
        found = _device("cuda", 0)
    elif isinstance(device, int) and not isinstance(device, bool):
        found = _device("cuda", device)
    else:
        found = _device(device)
    if found.type != "cuda":
        raise ValueError(f"{found} is not a CUDA device")
    count = device_count()
    if found.index >= count:
        raise _GPUError(f"{found}: this process sees {count} CUDA device"
                        f"{'' if count == 1 else 's'}")
    return found


def memory_allocated(device=None):
    """Bytes gpukit's arrays hold on the GPU now (torch.cuda.memory_allocated)."""
    return _cuda_device(device).memory_stats()["in_use_bytes"]


def max_memory_allocated(device=None):
    """The most bytes gpukit's arrays held at once, since the start or
    reset_peak_memory_stats() (torch.cuda.max_memory_allocated)."""
    return _cuda_device(device).memory_stats()["peak_in_use_bytes"]


def memory_reserved(device=None):
    """Bytes gpukit holds from the driver: in use plus its pool's cache
    (torch.cuda.memory_reserved; nvidia-smi counts these)."""
    return _cuda_device(device).memory_stats()["reserved_bytes"]


def reset_peak_memory_stats(device=None):
    """Restarts max_memory_allocated() from what is in use now."""
    _cuda_device(device).reset_peak_memory_stats()


def empty_cache(device=None):
    """Gives the freed memory gpukit's pool keeps back to the driver, so
    PyTorch, CuPy and other processes can have it (torch.cuda.empty_cache);
    None: every CUDA device this process has used."""
    if device is None:
        for index in range(device_count()):  # the ones never used have nothing
            _device("cuda", index).empty_cache()
    else:
        _cuda_device(device).empty_cache()
