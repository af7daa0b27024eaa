"""What gpukit's arrays take of each device's memory: device.memory_stats(),
reset_peak_memory_stats() and empty_cache(), gpukit.empty_cache(), and
torch.cuda's names in gpukit.cuda. On every device (a GPU's pool keeps
freed memory until empty_cache gives it back), and on the fake CUDA
driver, whose cuMemGetInfo shows what reaches the driver and which flags
memory freed while queued copies still use it."""
import gc
import os

import numpy as np
import pytest

import gpukit
from conftest import FAKE_CUDA

MIB = 1 << 20
KIB = 1 << 10
KEYS = {"in_use_bytes", "peak_in_use_bytes", "cached_bytes", "reserved_bytes",
        "driver_allocations"}


def test_stats_follow_arrays_and_empty_cache_gives_memory_back(device):
    d = gpukit.device(device)
    d.empty_cache()
    base = d.memory_stats()
    assert set(base) == KEYS
    assert base["reserved_bytes"] == base["in_use_bytes"] + base["cached_bytes"]
    # larger than any free block the pool keeps, so it takes memory of its own
    size = base["cached_bytes"] + 24 * MIB
    x = gpukit.zeros(size // 4, dtype=gpukit.float32, device=d)
    held = d.memory_stats()
    assert held["in_use_bytes"] >= base["in_use_bytes"] + size
    assert held["peak_in_use_bytes"] >= held["in_use_bytes"]
    assert held["driver_allocations"] > base["driver_allocations"]
    del x
    freed = d.memory_stats()
    assert freed["in_use_bytes"] == base["in_use_bytes"]
    if d.type == "cpu":
        assert freed["cached_bytes"] == 0  # malloc's memory: nothing kept
    else:
        assert freed["reserved_bytes"] == held["reserved_bytes"]  # the pool keeps it
    d.empty_cache()
    assert d.memory_stats()["reserved_bytes"] == base["reserved_bytes"]


def address_of(x):
    return np.from_dlpack(x).ctypes.data


def cpu_cache_limit():
    """What the CPU may keep: a sixteenth of the memory this process may
    use (the machine's, or its cgroup's), up to 1 GiB."""
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            memory = min(memory, int(f.read()))
    except (OSError, ValueError):  # no cgroup v2, or "max"
        pass
    return min(memory // 16, 1 << 30)


def test_cpu_keeps_large_blocks_for_the_next_array_of_their_size():
    """A freed CPU array from about 32 MiB is kept for the next of its size (in
    whole 2 MiB pages), whose pages are then already there; the oldest of
    more than four goes back first, and empty_cache gives them all back."""
    if cpu_cache_limit() < 148 * MIB:
        pytest.skip("the CPU keeps at most a sixteenth of memory: too little here")
    d = gpukit.device("cpu")
    gc.collect()
    gc.disable()  # no other large array may be freed between the reads
    try:
        check_kept_blocks(d)
    finally:
        gc.enable()


def check_kept_blocks(d):
    d.empty_cache()
    # an array of whole pages takes one more: every block has some unused
    # bytes after the array, for vendor kernels that read past its end
    exact = gpukit.empty(40 * MIB, dtype=gpukit.uint8, device=d)
    del exact
    assert d.memory_stats()["cached_bytes"] == 42 * MIB
    d.empty_cache()
    # so is one just under 32 MiB, whose malloc block (with glibc's header)
    # would reach 32 MiB and be mapped afresh, its pages faulted, each time
    under = gpukit.empty(32 * MIB - KIB, dtype=gpukit.uint8, device=d)
    del under
    assert d.memory_stats()["cached_bytes"] == 32 * MIB
    d.empty_cache()
    # the sizes below leave room for those bytes in their last page
    n = (40 * MIB - KIB) // 4
    x = gpukit.empty(n, dtype=gpukit.float32, device=d)
    address = address_of(x)
    base = d.memory_stats()
    del x
    freed = d.memory_stats()
    assert freed["cached_bytes"] == 40 * MIB
    # its bytes move from in use to cached: what the process holds stays
    assert freed["in_use_bytes"] == base["in_use_bytes"] - 40 * MIB
    assert freed["reserved_bytes"] == base["reserved_bytes"]
    y = gpukit.empty(n - 7, dtype=gpukit.float32, device=d)  # the same 20 huge pages
    stats = d.memory_stats()
    assert address_of(y) == address
    assert stats["driver_allocations"] == base["driver_allocations"]
    assert stats["cached_bytes"] == 0
    # another size is not served by it
    z = gpukit.empty(n + MIB, dtype=gpukit.float32, device=d)
    assert d.memory_stats()["driver_allocations"] == base["driver_allocations"] + 1
    del y, z
    assert d.memory_stats()["cached_bytes"] == 40 * MIB + 44 * MIB
    # five freed blocks: the oldest goes back
    arrays = [gpukit.empty((32 + 2 * i) * MIB - KIB, dtype=gpukit.uint8, device=d)
              for i in range(5)]
    d.empty_cache()
    while arrays:
        del arrays[0]  # the 32 MiB block first
    assert d.memory_stats()["cached_bytes"] == (34 + 36 + 38 + 40) * MIB
    # one larger than the whole cache may hold goes back at once
    big = gpukit.empty(1024 * MIB + 1, dtype=gpukit.uint8, device=d)
    del big
    assert d.memory_stats()["cached_bytes"] == (34 + 36 + 38 + 40) * MIB
    d.empty_cache()
    assert d.memory_stats()["cached_bytes"] == 0


def test_peak_and_its_reset(device):
    d = gpukit.device(device)
    x = gpukit.ones(MIB, dtype=gpukit.float32, device=d)
    gc.collect()
    gc.disable()  # no other array may be freed between the reads
    try:
        d.reset_peak_memory_stats()
        stats = d.memory_stats()
        assert stats["peak_in_use_bytes"] == stats["in_use_bytes"]
        y = gpukit.ones(2 * MIB, dtype=gpukit.float32, device=d)
        del y
        stats = d.memory_stats()
        assert stats["peak_in_use_bytes"] >= stats["in_use_bytes"] + 8 * MIB
    finally:
        gc.enable()
    del x


@pytest.mark.parametrize("every_device", [False, True])
def test_module_level_empty_cache(device, every_device):
    d = gpukit.device(device)
    gpukit.empty_cache(device)
    base = d.memory_stats()
    x = gpukit.ones((base["cached_bytes"] + 24 * MIB) // 4, dtype=gpukit.float32, device=d)
    del x
    gpukit.empty_cache() if every_device else gpukit.empty_cache(device)
    assert d.memory_stats()["reserved_bytes"] == base["reserved_bytes"]


def test_bad_devices():
    with pytest.raises(ValueError):
        gpukit.empty_cache("nonsense:7")


def test_cuda_names_refuse_other_devices(py):
    with pytest.raises(ValueError, match="not a CUDA device"):
        gpukit.cuda.memory_allocated("cpu")
    # a number this process cannot see, as gpukit.cuda's other functions
    out = py("""
import gpukit
for call in (gpukit.cuda.memory_allocated, gpukit.cuda.empty_cache,
             gpukit.cuda.reset_peak_memory_stats):
    try:
        call(8)
    except gpukit.GPUError as e:
        print(e)
""", scenario="h100x8", GPUKIT_CUDA_LIBRARY=FAKE_CUDA).stdout.splitlines()
    assert out == ["cuda:8: this process sees 8 CUDA devices"] * 3, out


def test_the_pool_gives_memory_back_to_the_cuda_driver(py):
    out = py("""
import ctypes, os
import numpy as np
import gpukit
driver = ctypes.CDLL(os.environ["GPUKIT_CUDA_LIBRARY"])
d = gpukit.device("cuda:0")
# a GPU never used reads 0s, and asking does not start it
assert d.memory_stats()["driver_allocations"] == 0
assert gpukit.cuda.memory_reserved(0) == 0
gpukit.cuda.empty_cache()
gpukit.empty_cache()
free0, total = d.mem_get_info()
x = gpukit.asarray(np.ones(16 << 20, dtype=np.float32), device=d)  # 64 MiB, copies queued
assert gpukit.cuda.memory_allocated(0) >= 64 << 20
del x
free1, _ = d.mem_get_info()
assert free1 <= free0 - (64 << 20), "the pool kept nothing"
assert gpukit.cuda.memory_allocated("cuda:0") == 0
assert gpukit.cuda.memory_reserved(0) >= 64 << 20
assert gpukit.cuda.max_memory_allocated(0) >= 64 << 20
gpukit.cuda.reset_peak_memory_stats(d)
assert gpukit.cuda.max_memory_allocated(0) == 0
gpukit.cuda.empty_cache(0)  # waits for the queued copies, then frees
free2, _ = d.mem_get_info()
assert free2 == free0, (free0, free2)
assert gpukit.cuda.memory_reserved(0) == 0
buf = ctypes.create_string_buffer(256)
print("misuses", driver.fake_cuda_misuses(buf, 256), buf.value.decode())
""", scenario="h100x8", GPUKIT_CUDA_LIBRARY=FAKE_CUDA).stdout
    assert out.split() == ["misuses", "0"], out
