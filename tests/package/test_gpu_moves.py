"""GPU data movement against the fake CUDA driver (tests/fake_cuda), whose
device memory is host memory and which runs no kernels but does queued
copies when something waits for them: a same-dtype copy between dense
blocks (copy, asarray(copy=True), .to() on one device, a concatenation's
pieces along the first axis) is the driver's device-to-device copy, no
kernel launched; downloads of many staging pieces arrive whole and in
order (each piece waited for before it is read). Timings need a real GPU:
bench/gpu_vs_peers.py."""
from conftest import FAKE_CUDA

MOVES = """
import ctypes, os
import numpy as np
import gpukit
fake = ctypes.CDLL(os.environ["GPUKIT_CUDA_LIBRARY"])  # the same library gpukit loaded

def launches():
    name = ctypes.create_string_buffer(128)
    dims = (ctypes.c_uint * 6)()
    stream = ctypes.c_void_p()
    params = (ctypes.c_ubyte * 64)()
    size = ctypes.c_size_t(64)
    return fake.fake_cuda_last_launch(name, 128, dims, ctypes.byref(stream), params,
                                      ctypes.byref(size))
"""


def test_dense_copies_are_driver_copies(py):
    py(MOVES + """
n = np.arange(24, dtype=np.float32).reshape(4, 6)
a = gpukit.asarray(n, device="cuda:0")
before = launches()
# a kernel would not run on the fake: right values mean the driver copied
np.testing.assert_array_equal(np.asarray(gpukit.asarray(a, copy=True)), n)
np.testing.assert_array_equal(np.asarray(a.to("cuda:0")), n)
np.testing.assert_array_equal(np.asarray(a[1:3].to("cuda:0")), n[1:3])  # a dense row block
b = gpukit.asarray(n + 100, device="cuda:0")
np.testing.assert_array_equal(np.asarray(gpukit.concat([a, b])), np.concatenate([n, n + 100]))
ints = gpukit.asarray(np.arange(10, dtype=np.int64), device="cuda:0")
np.testing.assert_array_equal(np.asarray(gpukit.asarray(ints, copy=True)), np.arange(10))
assert launches() == before, "a dense copy launched a kernel"
# a strided copy or a conversion still needs the kernel
gpukit.asarray(a[:, ::2], copy=True)
gpukit.astype(a, gpukit.float64)
assert launches() == before + 2
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA)


def test_large_download_arrives_whole(py):
    py(MOVES + """
# 72 MiB and a bit: several 8 MiB staging pieces in flight, the last
# short, and the destination faulted in ahead in 32 MiB steps, the last short
n = np.random.default_rng(3).integers(0, 2**31, (72 << 20) // 8 + 5, dtype=np.int64)
a = gpukit.asarray(n, device="cuda:0")
np.testing.assert_array_equal(np.asarray(a), n)
np.testing.assert_array_equal(np.asarray(a[5:]), n[5:])
# into an array that starts inside a page: the bytes before it stay
out = np.full(len(n) + 3, -1, dtype=np.int64)
a.copy_to_host(out[3:])
np.testing.assert_array_equal(out[3:], n)
assert out[:3].tolist() == [-1, -1, -1]
assert np.asarray(gpukit.asarray(n[:3], device="cuda:0")).tolist() == n[:3].tolist()
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA)
