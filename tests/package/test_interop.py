"""Zero-copy interop (python/interop.c): the buffer protocol, __array__,
DLPack both ways (versioned and legacy capsules), the CUDA array interface
(against the fake libcuda, where device memory is host memory), and the
lifetimes: each path survives its producer being dropped first, and
nothing leaks."""
import array
import ctypes
import gc
import hashlib
import os
import sys

import numpy as np
import pytest

import gpukit

from conftest import FAKE_CUDA

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
# NumPy's own formats (the 64-bit integers are l/L where a C long has 8 bytes).
FORMATS = {"bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": ("l", "q"),
           "uint8": "B", "uint16": "H", "uint32": "I", "uint64": ("L", "Q"), "float32": "f",
           "float64": "d"}


def sample(dtype, shape=(3, 4)):
    """A NumPy array of `dtype` with distinct values (0/1 for bool)."""
    n = np.arange(int(np.prod(shape))).reshape(shape)
    return (n % 2 == 1) if dtype == "bool" else n.astype(dtype)


def owned(n, device="cpu"):
    """A gpukit array with memory of its own (not NumPy's) holding n."""
    return gpukit.asarray(n.tolist(), dtype=str(n.dtype), device=device)


def host(x):
    """A NumPy copy of a gpukit array on any device."""
    return np.array(x.cpu())


# --- ctypes views of the C side: buffers with chosen flags, DLPack capsules ---

PyBUF_SIMPLE, PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND = 0, 0x1, 0x4, 0x8
PyBUF_STRIDES = 0x10 | PyBUF_ND
PyBUF_C_CONTIGUOUS = 0x20 | PyBUF_STRIDES
PyBUF_F_CONTIGUOUS = 0x40 | PyBUF_STRIDES
PyBUF_ANY_CONTIGUOUS = 0x80 | PyBUF_STRIDES


class PyBuffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p),
                ("len", ctypes.c_ssize_t), ("itemsize", ctypes.c_ssize_t),
                ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


def get_buffer(obj, flags):
    """What PyObject_GetBuffer(obj, flags) gives: a dict of its fields."""
    view = PyBuffer()
    ctypes.pythonapi.PyObject_GetBuffer.argtypes = [ctypes.py_object,
                                                    ctypes.POINTER(PyBuffer), ctypes.c_int]
    ctypes.pythonapi.PyBuffer_Release.argtypes = [ctypes.POINTER(PyBuffer)]
    ctypes.pythonapi.PyObject_GetBuffer(obj, ctypes.byref(view), flags)
    try:
        return {
            "buf": view.buf, "len": view.len, "readonly": view.readonly, "ndim": view.ndim,
            "format": view.format.decode() if view.format else None,
            "shape": tuple(view.shape[i] for i in range(view.ndim)) if view.shape else None,
            "strides": tuple(view.strides[i] for i in range(view.ndim)) if view.strides else None,
        }
    finally:
        ctypes.pythonapi.PyBuffer_Release(ctypes.byref(view))


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


READ_ONLY, IS_COPIED = 1, 2


def capsule_name(capsule):
    ctypes.pythonapi.PyCapsule_GetName.restype = ctypes.c_char_p
    ctypes.pythonapi.PyCapsule_GetName.argtypes = [ctypes.py_object]
    return ctypes.pythonapi.PyCapsule_GetName(capsule).decode()


def read_capsule(capsule):
    """The tensor in an unconsumed capsule as a dict (the capsule keeps it)."""
    name = capsule_name(capsule)
    ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
    ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer(capsule, name.encode())
    info = {"name": name}
    if name == "dltensor_versioned":
        managed = DLManagedTensorVersioned.from_address(pointer)
        info["version"] = (managed.version.major, managed.version.minor)
        info["flags"] = managed.flags
    else:
        managed = DLManagedTensor.from_address(pointer)
    t = managed.dl_tensor
    info.update(data=t.data or 0, device=(t.device.device_type, t.device.device_id),
                dtype=(t.dtype.code, t.dtype.bits, t.dtype.lanes),
                shape=tuple(t.shape[i] for i in range(t.ndim)),
                strides=tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None,
                byte_offset=t.byte_offset)
    return info


def rss():
    """Resident memory of this process in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# --- the buffer protocol (export) ---

@pytest.mark.parametrize("dtype", DTYPES)
def test_buffer_export_formats_and_values(dtype):
    n = sample(dtype)
    a = owned(n)
    view = memoryview(a)
    assert view.format in FORMATS[dtype]
    assert view.format == memoryview(n).format  # as NumPy exports it
    assert view.itemsize == n.itemsize
    assert view.shape == (3, 4) and view.strides == n.strides
    assert not view.readonly and view.c_contiguous
    back = np.asarray(a)  # NumPy takes CPU arrays through the buffer protocol
    assert back.dtype == n.dtype
    np.testing.assert_array_equal(back, n)


def test_buffer_export_is_zero_copy_both_ways():
    a = owned(np.arange(12, dtype=np.float32).reshape(3, 4))
    n = np.asarray(a)
    assert n.flags.writeable
    n[1, 2] = 99
    assert float(np.asarray(a)[1, 2]) == 99  # a NumPy write shows in gpukit
    assert np.shares_memory(n, np.asarray(a))
    b = np.frombuffer(a, dtype=np.float32)  # the same memory, flat
    assert b[6] == 99


def test_buffer_export_of_views():
    n = np.arange(24, dtype=np.float64).reshape(4, 6)
    a = owned(n)
    for index in [np.s_[::2, 1:], np.s_[::-1], np.s_[:, ::-2], np.s_[1:3, 2]]:
        view = np.asarray(a[index])
        np.testing.assert_array_equal(view, n[index])
        assert view.strides == n[index].strides
        assert np.shares_memory(view, np.asarray(a))
    t = np.asarray(a.T)
    np.testing.assert_array_equal(t, n.T)
    assert t.strides == n.T.strides and np.shares_memory(t, np.asarray(a))


def test_buffer_flags_are_honoured():
    a = owned(np.arange(12, dtype=np.int32).reshape(3, 4))
    full = get_buffer(a, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
    assert full["shape"] == (3, 4) and full["strides"] == (16, 4) and full["format"] == "i"
    simple = get_buffer(a, PyBUF_SIMPLE)
    assert simple["shape"] is None and simple["strides"] is None and simple["format"] is None
    assert simple["len"] == 48 and simple["ndim"] == 1
    nd = get_buffer(a, PyBUF_ND)
    assert nd["shape"] == (3, 4) and nd["strides"] is None
    assert get_buffer(a, PyBUF_WRITABLE)["readonly"] == 0
    # A strided view: fine with strides, refused where contiguity is asked.
    view = a[:, ::2]
    assert get_buffer(view, PyBUF_STRIDES)["strides"] == (16, 8)
    for flags in [PyBUF_SIMPLE, PyBUF_ND, PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS,
                  PyBUF_ANY_CONTIGUOUS]:
        with pytest.raises(BufferError, match="strided view"):
            get_buffer(view, flags)
    with pytest.raises(BufferError):
        hashlib.sha256(view)  # a plain bytes-like consumer
    # The transpose is Fortran-contiguous: F and ANY are met, C is not.
    assert get_buffer(a.T, PyBUF_F_CONTIGUOUS)["strides"] == (4, 16)
    assert get_buffer(a.T, PyBUF_ANY_CONTIGUOUS)["shape"] == (4, 3)
    with pytest.raises(BufferError):
        get_buffer(a.T, PyBUF_C_CONTIGUOUS)
    assert hashlib.sha256(a).digest() == hashlib.sha256(np.arange(12, dtype=np.int32)).digest()


def test_buffer_export_of_broadcast_views_is_read_only():
    a = owned(np.arange(3, dtype=np.float32))
    stretched = gpukit.broadcast_to(a, (4, 3))
    assert memoryview(stretched).readonly
    assert memoryview(stretched).strides == (0, 4)
    np.testing.assert_array_equal(np.asarray(stretched), np.broadcast_to(np.arange(3), (4, 3)))
    with pytest.raises(BufferError, match="broadcast"):
        get_buffer(stretched, PyBUF_WRITABLE | PyBUF_STRIDES)


def test_buffer_export_of_zero_d_and_empty_arrays():
    scalar = owned(np.array(2.5))
    assert memoryview(scalar).shape == () and np.asarray(scalar) == 2.5
    empty = gpukit.zeros((0, 3), dtype="int64")
    assert np.asarray(empty).shape == (0, 3)


def test_buffer_export_refused_off_the_cpu(device):
    if device == "cpu":
        pytest.skip("CPU arrays export buffers")
    a = gpukit.asarray(np.arange(4, dtype=np.float32), device=device)
    with pytest.raises(BufferError, match=rf"on {device}: call \.cpu\(\) first"):
        memoryview(a)


def test_buffer_export_outlives_the_array():
    a = owned(np.arange(1000, dtype=np.float64))
    before = sys.getrefcount(a)
    view = memoryview(a)
    assert sys.getrefcount(a) == before + 1  # view.obj
    n = np.asarray(view)
    del a
    gc.collect()
    np.testing.assert_array_equal(n, np.arange(1000))
    del n
    view.release()


# --- __array__ ---

def test_array_on_the_cpu_shares_memory():
    a = owned(np.arange(6, dtype=np.int32))
    n = a.__array__()
    assert np.shares_memory(n, np.asarray(a))
    assert not np.shares_memory(a.__array__(copy=True), n)
    assert np.shares_memory(a.__array__(copy=False), n)
    converted = a.__array__(np.float64)  # copy=None: converts
    assert converted.dtype == np.float64 and not np.shares_memory(converted, n)
    assert a.__array__(dtype=gpukit.int32, copy=False).dtype == np.int32
    assert a.__array__(dtype="int32", copy=False).dtype == np.int32
    with pytest.raises(ValueError, match="copy"):
        a.__array__(dtype=np.float64, copy=False)
    del a
    gc.collect()
    np.testing.assert_array_equal(n, np.arange(6))  # the producer was dropped first


def test_array_of_device_arrays(device):
    n = sample("float32")
    a = gpukit.asarray(n, device=device)
    for got in [np.asarray(a), np.array(a), a.__array__(), a.__array__(copy=True)]:
        np.testing.assert_array_equal(got, n)
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    if device != "cpu":
        with pytest.raises(ValueError, match="copy"):
            a.__array__(copy=False)
        with pytest.raises(ValueError):
            np.asarray(a, copy=False)


# --- DLPack: gpukit -> NumPy ---

@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_to_numpy(dtype):
    n = sample(dtype)
    a = owned(n)
    m = np.from_dlpack(a)
    assert m.dtype == n.dtype
    np.testing.assert_array_equal(m, n)
    assert np.shares_memory(m, np.asarray(a))
    codes = {"bool": (6, 8), "int8": (0, 8), "int16": (0, 16), "int32": (0, 32),
             "int64": (0, 64), "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32),
             "uint64": (1, 64), "float32": (2, 32), "float64": (2, 64)}
    assert read_capsule(a.__dlpack__())["dtype"] == codes[dtype] + (1,)


def test_dlpack_capsule_versions():
    a = owned(np.arange(12, dtype=np.float32).reshape(3, 4))
    data = np.asarray(a).ctypes.data
    legacy = read_capsule(a.__dlpack__())
    assert legacy["name"] == "dltensor"
    assert legacy["data"] == data and legacy["device"] == (1, 0)
    assert legacy["shape"] == (3, 4) and legacy["strides"] == (4, 1)
    assert capsule_name(a.__dlpack__(max_version=(0, 8))) == "dltensor"
    for max_version, version in [((1, 0), (1, 0)), ((1, 1), (1, 1)), ((1, 5), (1, 1)),
                                 ((2, 0), (1, 1))]:
        info = read_capsule(a.__dlpack__(max_version=max_version))
        assert info["name"] == "dltensor_versioned" and info["version"] == version
        assert info["flags"] == 0 and info["data"] == data
    copied = read_capsule(a.__dlpack__(max_version=(1, 0), copy=True))
    assert copied["flags"] == IS_COPIED and copied["data"] != data
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(ValueError, match="stream"):
        a.__dlpack__(stream=1)
    with pytest.raises(TypeError):
        a.__dlpack__(max_version=1)


def test_dlpack_views_to_numpy():
    n = np.arange(24, dtype=np.int64).reshape(4, 6)
    a = owned(n)
    for index in [np.s_[::2, 1:], np.s_[::-1], np.s_[:, ::-2], np.s_[1:, 3]]:
        m = np.from_dlpack(a[index])
        np.testing.assert_array_equal(m, n[index])
        assert m.strides == n[index].strides
        assert np.shares_memory(m, np.asarray(a))
    np.testing.assert_array_equal(np.from_dlpack(a.T), n.T)
    stretched = read_capsule(gpukit.broadcast_to(a[0], (2, 6)).__dlpack__(max_version=(1, 0)))
    assert stretched["strides"] == (0, 1) and stretched["flags"] == READ_ONLY


def test_dlpack_from_a_device(device):
    if device == "cpu":
        pytest.skip("a GPU array")
    n = sample("float32")
    a = gpukit.asarray(n, device=device)
    if device.startswith("opencl"):
        with pytest.raises(BufferError, match="OpenCL arrays cannot be exported with DLPack"):
            a.__dlpack__()
        assert a.__dlpack_device__() == (4, 0)
    else:  # CUDA: exported where it lies (kDLCUDA, the device's index)
        where = (2, int(device.split(":")[1]))
        assert a.__dlpack_device__() == where
        info = read_capsule(a.__dlpack__(max_version=(1, 0)))
        assert info["device"] == where and not info["flags"] & IS_COPIED
    info = read_capsule(a.__dlpack__(max_version=(1, 0), dl_device=(1, 0)))
    assert info["device"] == (1, 0) and info["flags"] == IS_COPIED
    with pytest.raises(BufferError, match="copy"):
        a.__dlpack__(dl_device=(1, 0), copy=False)
    np.testing.assert_array_equal(np.from_dlpack(a, device="cpu"), n)
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(4, 0))


def test_dlpack_export_outlives_the_array():
    base = np.arange(50, dtype=np.float64)
    a = gpukit.from_dlpack(base)  # memory NumPy owns, held through its deleter
    count = sys.getrefcount(base)
    capsule = a.__dlpack__(max_version=(1, 0))
    m = np.from_dlpack(a[10:])
    del a
    gc.collect()
    assert sys.getrefcount(base) == count  # still held by the gpukit memory
    np.testing.assert_array_equal(m, np.arange(10, 50))
    del m
    gc.collect()
    assert sys.getrefcount(base) == count  # the unconsumed capsule holds it now
    del capsule  # never consumed: its destructor runs the deleter
    gc.collect()
    assert sys.getrefcount(base) == count - 1


# --- DLPack: NumPy -> gpukit ---

@pytest.mark.parametrize("dtype", DTYPES)
def test_from_dlpack_numpy(dtype):
    n = sample(dtype)
    a = gpukit.from_dlpack(n)
    assert a.dtype == dtype and a.shape == n.shape and a.device == "cpu"
    np.testing.assert_array_equal(np.asarray(a), n)
    assert np.shares_memory(np.asarray(a), n)


def test_from_dlpack_writes_show_both_ways():
    n = np.zeros(5, dtype=np.float32)
    a = gpukit.from_dlpack(n)
    n[1] = 7
    assert float(a[1]) == 7
    np.asarray(a)[3] = 9
    assert n[3] == 9


def test_from_dlpack_views():
    n = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in [n[::2, 1:], n.T, n[::-1], n[:, ::-2], n[1:, 3], n[2:3, 4:]]:
        a = gpukit.from_dlpack(view)
        assert a.shape == view.shape
        np.testing.assert_array_equal(host(a), view)
        assert np.shares_memory(np.asarray(a), n)


def test_from_dlpack_unsupported_dtypes():
    # NumPy itself refuses to export long doubles; gpukit says so as it is
    with pytest.raises((TypeError, BufferError)):
        gpukit.from_dlpack(np.zeros(3, dtype=np.longdouble))


def test_from_dlpack_read_only_is_copied():
    base = np.arange(6, dtype=np.int64)
    frozen = base.view()
    frozen.setflags(write=False)
    a = gpukit.from_dlpack(frozen)
    base[0] = 100
    assert int(a[0]) == 0  # a copy: gpukit arrays are writable
    with pytest.raises(ValueError, match="read-only"):
        gpukit.from_dlpack(frozen, copy=False)
    np.testing.assert_array_equal(host(gpukit.asarray(frozen)), base)


def test_from_dlpack_unaligned_is_copied():
    raw = bytearray(8 * 12 + 1)
    flat = np.frombuffer(raw, dtype=np.float64, offset=1)  # NumPy exports it as it is
    flat[:] = np.arange(12)
    for view in [flat, flat.reshape(3, 4)[::2, ::-1]]:
        a = gpukit.from_dlpack(view)
        np.testing.assert_array_equal(host(a), view)
        assert not np.shares_memory(np.asarray(a), view)
    with pytest.raises(ValueError, match="aligned"):
        gpukit.from_dlpack(flat, copy=False)


def test_from_dlpack_copy_and_device(device):
    n = np.arange(6, dtype=np.float32)
    copied = gpukit.from_dlpack(n, copy=True)
    assert not np.shares_memory(np.asarray(copied), n)
    shared = gpukit.from_dlpack(n, copy=False)
    assert np.shares_memory(np.asarray(shared), n)
    moved = gpukit.from_dlpack(n, device=device)
    assert moved.device == device
    np.testing.assert_array_equal(host(moved), n)
    if device != "cpu":
        with pytest.raises(ValueError, match="copy"):
            gpukit.from_dlpack(n, device=device, copy=False)
    else:
        assert np.shares_memory(np.asarray(moved), n)
        assert not np.shares_memory(np.asarray(gpukit.from_dlpack(n, device="cpu",
                                                                  copy=True)), n)


def test_from_dlpack_renames_the_capsule():
    class Producer:
        """Hands out NumPy's capsules and keeps them to look at."""

        def __init__(self, n, legacy=False):
            self.n, self.legacy, self.capsules, self.calls = n, legacy, [], []

        def __dlpack_device__(self):
            return self.n.__dlpack_device__()

        def __dlpack__(self, **kwargs):
            self.calls.append(kwargs)
            if self.legacy and "max_version" in kwargs:
                raise TypeError("an old producer")
            self.capsules.append(self.n.__dlpack__(**kwargs))
            return self.capsules[-1]

    n = np.arange(4, dtype=np.float64)
    modern = Producer(n)
    np.testing.assert_array_equal(host(gpukit.from_dlpack(modern)), n)
    assert modern.calls == [{"max_version": (1, 1)}]
    assert capsule_name(modern.capsules[0]) == "used_dltensor_versioned"
    old = Producer(n, legacy=True)
    a = gpukit.from_dlpack(old)
    assert [sorted(c) for c in old.calls] == [["max_version"], []]
    assert capsule_name(old.capsules[0]) == "used_dltensor"
    assert np.shares_memory(np.asarray(a), n)
    with pytest.raises(TypeError, match="DLPack capsule"):
        class Reused(Producer):
            def __dlpack__(self, **kwargs):
                return modern.capsules[0]  # consumed already
        gpukit.from_dlpack(Reused(n))
    with pytest.raises(TypeError, match="DLPack"):
        gpukit.from_dlpack([1, 2, 3])


def test_from_dlpack_refused_tensor_runs_a_python_deleter_cleanly():
    """A tensor taken over and then refused (here a negative length) is
    deleted at once; a deleter that runs Python code (a producer written in
    Python) runs without the pending exception, which the caller then gets
    as it was (not a SystemError)."""
    n = np.arange(4, dtype=np.float64)
    deleted = []

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def deleter(_):
        deleted.append(sum([1]))  # Python code: it fails with an exception pending

    def capsule(versioned, shape):
        lengths = (ctypes.c_int64 * 1)(shape)
        tensor = DLTensor(n.ctypes.data, DLDevice(1, 0), 1, DLDataType(2, 64, 1),
                          lengths, None, 0)
        if versioned:
            managed = DLManagedTensorVersioned(DLPackVersion(1, 1), None,
                                               ctypes.cast(deleter, ctypes.c_void_p), 0, tensor)
        else:
            managed = DLManagedTensor(tensor, None, ctypes.cast(deleter, ctypes.c_void_p))
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        name = b"dltensor_versioned" if versioned else b"dltensor"
        return new(ctypes.addressof(managed), name, None), (lengths, managed)

    class Producer:
        def __init__(self, versioned, shape):
            self.capsule, self.keep = capsule(versioned, shape)

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            return self.capsule

    for versioned in (True, False):
        with pytest.raises(ValueError, match="negative length"):
            gpukit.from_dlpack(Producer(versioned, -1))
        assert deleted == [1]
        deleted.clear()
        a = gpukit.from_dlpack(Producer(versioned, 4))  # and the deleter of a good one
        del a
        gc.collect()
        assert deleted == [1]
        deleted.clear()


def test_from_dlpack_of_gpukit_producers(device):
    a = gpukit.asarray(sample("int32"), device=device)

    class Wrapper:
        """Our own producer, through the protocol."""

        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

        def __dlpack__(self, **kwargs):
            return self.a.__dlpack__(**kwargs)

    if device.startswith("opencl"):
        with pytest.raises(BufferError, match="OpenCL"):
            gpukit.from_dlpack(Wrapper(a))
    elif device == "cpu":
        b = gpukit.from_dlpack(Wrapper(a))
        assert np.shares_memory(np.asarray(a), np.asarray(b))
    else:  # CUDA: the same device memory
        b = gpukit.from_dlpack(Wrapper(a))
        assert (b.__cuda_array_interface__["data"][0]
                == a.__cuda_array_interface__["data"][0])
    same = gpukit.from_dlpack(a)  # a gpukit array directly: the same memory
    assert same.device == device
    np.testing.assert_array_equal(host(same), sample("int32"))


def test_from_dlpack_producer_dropped_first():
    base = np.arange(100, dtype=np.float32)
    count = sys.getrefcount(base)
    a = gpukit.from_dlpack(base)
    view = a[::3]
    assert sys.getrefcount(base) == count + 1  # NumPy's manager holds it
    del a
    gc.collect()
    assert sys.getrefcount(base) == count + 1
    np.testing.assert_array_equal(host(view), np.arange(0, 100, 3))
    del view
    gc.collect()
    assert sys.getrefcount(base) == count  # the deleter ran once, at the last view
    only = gpukit.from_dlpack(np.arange(10, dtype=np.int64) * 3)  # no other reference at all
    gc.collect()
    np.testing.assert_array_equal(host(only), np.arange(10) * 3)


# --- asarray through the protocols (gkpy_from_protocols) ---

def test_asarray_takes_buffers_without_copying():
    n = np.arange(6, dtype=np.float64)
    assert np.shares_memory(np.asarray(gpukit.asarray(n)), n)
    ints = array.array("i", [1, 2, 3])
    a = gpukit.asarray(ints)
    assert a.dtype == "int32"
    ints[0] = 10
    assert int(a[0]) == 10
    raw = bytearray(b"\x01\x02\x03")
    b = gpukit.asarray(raw)
    assert b.dtype == "uint8"
    raw[2] = 30
    assert int(b[2]) == 30
    # memoryview slices: strided buffers.
    m = memoryview(np.arange(10, dtype=np.int64))[::3]
    np.testing.assert_array_equal(host(gpukit.asarray(m)), [0, 3, 6, 9])
    # While gpukit holds the bytearray's buffer it cannot resize; after, it can.
    with pytest.raises(BufferError):
        raw.append(4)
    count = sys.getrefcount(raw)
    del b
    gc.collect()
    assert sys.getrefcount(raw) == count - 1  # the buffer was given back
    raw.append(4)


def test_asarray_copies_read_only_and_odd_buffers():
    data = b"\x05\x06\x07"
    a = gpukit.asarray(data)  # bytes are read-only: a copy
    np.testing.assert_array_equal(host(a), [5, 6, 7])
    assert np.asarray(a).ctypes.data != np.frombuffer(data, np.uint8).ctypes.data
    unaligned = np.frombuffer(bytearray(17), dtype=np.float64, count=2, offset=1)
    np.testing.assert_array_equal(host(gpukit.asarray(unaligned)), [0, 0])
    # Strides that are not whole elements (6 bytes for int32): a copy.
    skewed = np.ndarray((3,), dtype=np.int32, buffer=np.arange(20, dtype=np.uint8),
                        strides=(6,))
    np.testing.assert_array_equal(host(gpukit.asarray(skewed)), skewed)
    with pytest.raises(TypeError, match="'g'"):
        gpukit.asarray(memoryview(np.zeros(2, np.longdouble)))
    with pytest.raises(TypeError, match="'g'|float128"):
        gpukit.asarray(np.zeros(2, np.longdouble))


def test_asarray_producer_dropped_first():
    holder = array.array("d", [1.5, 2.5, 3.5])
    a = gpukit.asarray(holder)
    del holder  # the Py_buffer keeps it
    gc.collect()
    np.testing.assert_array_equal(host(a), [1.5, 2.5, 3.5])


def test_asarray_uses_array_when_nothing_else():
    class OnlyArray:
        def __init__(self, n):
            self.n = n

        def __array__(self, dtype=None, copy=None):
            return self.n

    n = np.arange(4, dtype=np.int32)
    a = gpukit.asarray(OnlyArray(n))
    assert np.shares_memory(np.asarray(a), n)
    del n
    gc.collect()
    np.testing.assert_array_equal(host(a), np.arange(4))


def test_asarray_copy_false_asks_array_for_no_copy():
    """asarray(copy=False) of an object with only __array__ passes
    copy=False on, as NumPy 2 does: an __array__ that can only copy says so
    (a new array from a plain call would be shared, but not the object's
    memory), and one without the keyword cannot promise (ValueError)."""
    class Fresh:
        calls = []

        def __array__(self, dtype=None, copy=None):
            Fresh.calls.append(copy)
            if copy is False:
                raise ValueError("Fresh cannot avoid a copy")
            return np.arange(3.0)  # a new array each time

    class Old:
        def __array__(self, dtype=None):
            return np.arange(3.0)

    with pytest.raises(ValueError, match="cannot avoid a copy"):
        gpukit.asarray(Fresh(), copy=False)
    assert Fresh.calls == [False]
    np.testing.assert_array_equal(host(gpukit.asarray(Fresh())), [0, 1, 2])
    assert Fresh.calls == [False, None]
    with pytest.raises(ValueError, match="copy"):
        gpukit.asarray(Old(), copy=False)
    np.testing.assert_array_equal(host(gpukit.asarray(Old())), [0, 1, 2])


# --- leaks ---

def test_no_leaks_in_export_import_loops():
    n = np.arange(64, dtype=np.float32)
    a = owned(n)
    base_n, base_a = sys.getrefcount(n), sys.getrefcount(a)

    def once():
        b = gpukit.from_dlpack(n)
        np.from_dlpack(b)
        np.from_dlpack(a)
        a.__dlpack__(max_version=(1, 0))
        a.__dlpack__()
        memoryview(a).release()
        np.asarray(a[::2])
        gpukit.asarray(memoryview(n))
        a.__array__(copy=True)

    for _ in range(10000):
        once()
    gc.collect()
    before = rss()
    for _ in range(100000):
        once()
    gc.collect()
    grown = rss() - before
    assert sys.getrefcount(n) == base_n and sys.getrefcount(a) == base_a
    # AddressSanitizer holds freed memory back (its quarantine): RSS tells
    # nothing there.
    if os.environ.get("GPUKIT_SANITIZE") not in ("1", "ON", "TRUE"):
        assert grown < 4 << 20, f"RSS grew by {grown / 2**20:.1f} MiB"


# --- CUDA: the fake libcuda (device memory is host memory there) ---

CUDA_HELPERS = """
import ctypes, gc, sys
import numpy as np
import gpukit
import os
fake = ctypes.CDLL(os.environ["GPUKIT_CUDA_LIBRARY"])  # the same library gpukit loaded

def read(pointer, dtype, count):
    # device memory of the fake is host memory
    return np.frombuffer((ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(pointer),
                         dtype=dtype).copy()

class Producer:
    # a CuPy-like producer: __cuda_array_interface__ over (fake) device memory
    def __init__(self, n, stream=1, readonly=False, typestr=None, strides=None):
        self.n = n
        self.__cuda_array_interface__ = {
            "shape": n.shape, "typestr": typestr or n.dtype.str, "version": 3,
            "data": (n.ctypes.data, readonly), "strides": strides, "stream": stream}
"""


def test_cuda_array_interface_export(py):
    py(CUDA_HELPERS + """
n = np.arange(12, dtype=np.float32).reshape(3, 4)
a = gpukit.asarray(n, device="cuda:0")
cai = a.__cuda_array_interface__
assert cai["shape"] == (3, 4) and cai["typestr"] == "<f4" and cai["version"] == 3
assert cai["strides"] is None and cai["stream"] is None and cai["data"][1] is False
np.testing.assert_array_equal(read(cai["data"][0], "float32", 12), n.ravel())
t = a.T.__cuda_array_interface__
assert t["shape"] == (4, 3) and t["strides"] == (4, 16) and t["data"][0] == cai["data"][0]
row = a[1].__cuda_array_interface__
assert row["data"][0] == cai["data"][0] + 16
for dtype, typestr in [("bool", "|b1"), ("int8", "|i1"), ("int16", "<i2"), ("int32", "<i4"),
                       ("int64", "<i8"), ("uint8", "|u1"), ("uint16", "<u2"), ("uint32", "<u4"),
                       ("uint64", "<u8"), ("float64", "<f8")]:
    assert np.dtype(dtype).str == typestr  # NumPy's typestr
    x = gpukit.asarray(np.ones(2, dtype=dtype), device="cuda:0")
    assert x.__cuda_array_interface__["typestr"] == typestr
    # and back: the import reads the typestr (integers' extremes arrive whole)
    info = np.iinfo(dtype) if dtype[0] in "iu" else None
    values = np.array([info.min, info.max] if info else [0, 1], dtype=dtype)
    y = gpukit.asarray(Producer(values))
    assert y.dtype == dtype and y.device == "cuda:0"
    assert y.tolist() == values.tolist()
assert gpukit.zeros((0, 2), device="cuda:0").__cuda_array_interface__["data"][0] == 0
# broadcast views are read-only, as in their buffer and DLPack exports
wide = gpukit.broadcast_to(a[0], (5, 4)).__cuda_array_interface__
assert wide["data"] == (cai["data"][0], True) and wide["strides"] == (0, 4)
assert not hasattr(gpukit.zeros(2), "__cuda_array_interface__")
try:
    gpukit.zeros(2).__cuda_array_interface__
except AttributeError as e:
    assert "only CUDA arrays" in str(e)
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA)


def test_cuda_array_interface_import(py):
    py(CUDA_HELPERS + """
n = np.arange(6, dtype=np.int32)
p = Producer(n)
count = sys.getrefcount(p)
waits = fake.fake_cuda_default_stream_waits()
a = gpukit.asarray(p)
assert fake.fake_cuda_default_stream_waits() == waits + 1   # stream 1 was waited for
assert a.device == "cuda:0" and a.dtype == "int32" and a.shape == (6,)
assert a.__cuda_array_interface__["data"][0] == n.ctypes.data   # zero-copy
assert sys.getrefcount(p) == count + 1
n[2] = 42
np.testing.assert_array_equal(np.asarray(a), [0, 1, 42, 3, 4, 5])
view = a[1:]
del a
gc.collect()
assert sys.getrefcount(p) == count + 1
del view
gc.collect()
assert sys.getrefcount(p) == count   # released with the last view

# the producer dropped before the consumer
q = Producer(np.arange(4, dtype=np.float64) + 0.5, stream=None)
b = gpukit.asarray(q)
del q
gc.collect()
np.testing.assert_array_equal(np.asarray(b), [0.5, 1.5, 2.5, 3.5])

# strides in bytes; a transposed producer
m = np.arange(6, dtype=np.float32).reshape(2, 3)
s = Producer(m)
s.__cuda_array_interface__["shape"] = (3, 2)
s.__cuda_array_interface__["strides"] = (4, 12)
st = gpukit.asarray(s)
assert st.shape == (3, 2) and st.__cuda_array_interface__["strides"] == (4, 12)

# read-only memory is copied (not shared)
r = Producer(np.arange(3, dtype=np.int64), readonly=True)
c = gpukit.asarray(r)
assert c.__cuda_array_interface__["data"][0] != r.n.ctypes.data

# errors
for bad, kind, text in [(Producer(n, typestr="<f16"), TypeError, "float128"),
                        (Producer(n, typestr=">i4"), TypeError, "big-endian"),
                        (Producer(n, typestr="<i4[ns]"), TypeError, "element type"),
                        (Producer(n, typestr="<i"), TypeError, "element type"),
                        (Producer(n, stream=0), ValueError, "stream 0")]:
    try:
        gpukit.asarray(bad)
        raise SystemExit("no error for " + text)
    except kind as e:
        assert text in str(e), e
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA)


RELEASE_HELPERS = """
def push_context():
    # the test plays another CUDA library: it queues work on the same device
    gpukit.zeros(1, device="cuda:0")   # the driver initialised
    context = ctypes.c_void_p()
    assert fake.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0) == 0
    assert fake.cuCtxPushCurrent_v2(context) == 0

def capsule_data(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.c_void_p.from_address(get(capsule, b"dltensor")).value

def read_later(address, count, stream):
    # the consumer's work: a copy out of the memory, queued on its stream
    out = np.zeros(count, dtype=np.float32)
    assert fake.cuMemcpyDtoHAsync_v2(ctypes.c_void_p(out.ctypes.data), ctypes.c_uint64(address),
                                     ctypes.c_size_t(out.nbytes), stream) == 0
    return out

N = 1 << 16
"""


def test_exported_memory_returns_after_the_consumers_work(py):
    """An export's memory goes back to gpukit's pool only once the work the
    consumer queued on it is done: ordered after the legacy stream it named
    (no host wait), else waited for on the host (any stream)."""
    py(CUDA_HELPERS + RELEASE_HELPERS + """
push_context()
original = np.arange(N, dtype=np.float32)
for how in ["dlpack stream 1", "dlpack stream 2", "cuda array interface"]:
    x = gpukit.asarray(original, device="cuda:0")
    if how.startswith("dlpack"):
        stream = 1 if how.endswith("1") else 2
        capsule = x.__dlpack__(stream=stream)
        address, consumer = capsule_data(capsule), ctypes.c_void_p(1)
    else:
        capsule = x.__cuda_array_interface__
        address, consumer = capsule["data"][0], ctypes.c_void_p()
        assert fake.cuStreamCreate(ctypes.byref(consumer), 1) == 0
    seen = read_later(address, N, consumer)
    waits = fake.fake_cuda_host_waits()
    del capsule, x
    gc.collect()
    # stream 1: a stream-ordered wait; otherwise the host waited for it
    assert fake.fake_cuda_host_waits() - waits == (0 if how.endswith("1") else 1), how
    # the pool hands the same memory out again, and gpukit writes it
    y = gpukit.asarray(np.full(N, 7, dtype=np.float32), device="cuda:0")
    assert capsule_data(y.__dlpack__(stream=-1)) == address
    np.testing.assert_array_equal(np.asarray(y), 7)
    assert fake.cuStreamSynchronize(consumer) == 0
    np.testing.assert_array_equal(seen, original, err_msg=how)
    del y
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA)


def test_imported_memory_returns_after_gpukits_work(py):
    """The producer gets its memory back (the release callback) only once
    the work gpukit queued on it is done: it may reuse it at once."""
    py(CUDA_HELPERS + RELEASE_HELPERS + """
n = np.arange(N, dtype=np.float32)
p = Producer(n)
a = gpukit.asarray(p)                  # zero-copy
copy = gpukit.asarray(a, copy=True)    # queued on gpukit's stream, reading n
del a, p
gc.collect()
n[:] = -1                              # the producer reuses its memory
np.testing.assert_array_equal(np.asarray(copy), np.arange(N))
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA)


def test_dlpack_on_cuda(py):
    py(CUDA_HELPERS + """
n = np.arange(8, dtype=np.float32)
a = gpukit.asarray(n, device="cuda:0")
pointer = a.__cuda_array_interface__["data"][0]
assert a.__dlpack_device__() == (2, 0)

class Wrapper:
    def __init__(self, a):
        self.a, self.calls = a, []
    def __dlpack_device__(self):
        return self.a.__dlpack_device__()
    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        return self.a.__dlpack__(**kwargs)

w = Wrapper(a)
b = gpukit.from_dlpack(w)
assert w.calls == [{"stream": 1, "max_version": (1, 1)}]
assert b.device == "cuda:0" and b.__cuda_array_interface__["data"][0] == pointer
del a, w
gc.collect()
np.testing.assert_array_equal(np.asarray(b), n)     # the producer dropped first

for stream in [None, 1, 2, -1, 12345]:
    b.__dlpack__(stream=stream, max_version=(1, 0))
for stream in [0, -2]:
    try:
        b.__dlpack__(stream=stream)
        raise SystemExit("stream %r accepted" % stream)
    except ValueError:
        pass
host = np.from_dlpack(b, device="cpu")                 # dl_device=(1, 0): a copy
np.testing.assert_array_equal(host, n)
try:
    b.__dlpack__(dl_device=(1, 0), copy=False)
    raise SystemExit("copy=False accepted")
except BufferError:
    pass
c = gpukit.from_dlpack(b, device="cpu")
assert c.device == "cpu"
np.testing.assert_array_equal(np.asarray(c), n)
e = gpukit.from_dlpack(np.arange(3, dtype=np.int64), device="cuda:0")
assert e.device == "cuda:0"
np.testing.assert_array_equal(np.asarray(e), [0, 1, 2])
""", GPUKIT_CUDA_LIBRARY=FAKE_CUDA)
