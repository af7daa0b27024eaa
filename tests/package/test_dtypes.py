"""The dtypes from Python: all eleven of the array API standard's real
dtypes as objects (equal to NumPy's), moved between NumPy, Python lists and
every device without losing a bit (uint64 and int64 extremes included), and
the standard's data type functions (astype, can_cast, finfo, iinfo,
isdtype, result_type, __array_namespace_info__) against NumPy 2's answers,
and Python ints beyond a dtype's range beside its arrays.

Only conversions are computed here, never arithmetic between dtypes: the
operators' promotion is the core's (tests/unit) and the ops tests'."""
import array
import operator
import pickle

import numpy as np
import pytest

import gpukit

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
INTEGERS = [d for d in DTYPES if d[0] in "iu"]
NEW = ["int8", "int16", "uint16", "uint32", "uint64"]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]


def extremes(dtype):
    """Values that test every bit of `dtype`: its limits and their
    neighbours, and zero."""
    if dtype == "bool":
        return [False, True, True, False]
    if dtype.startswith("float"):
        info = np.finfo(dtype)
        return [float(info.min), float(info.max), float(info.smallest_normal), -0.0, 1.5]
    info = np.iinfo(dtype)
    return [int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1, 0]


# --- the dtype objects -------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_dtype_objects(name):
    dt = getattr(gpukit, name)
    assert isinstance(dt, gpukit.dtype)
    assert dt == name and dt == np.dtype(name) and dt == getattr(np, name)
    assert hash(dt) == hash(name)
    assert str(dt) == dt.name == name and repr(dt) == f"gpukit.{name}"
    assert dt.itemsize == np.dtype(name).itemsize
    assert dt.kind == np.dtype(name).kind
    assert pickle.loads(pickle.dumps(dt)) is dt
    assert all(dt != getattr(gpukit, other) for other in DTYPES if other != name)
    assert gpukit.zeros(2, dtype=name).dtype is dt  # one object per dtype


def test_unsupported_dtypes_are_named():
    for bad in ["float128", np.longdouble, np.dtype("longdouble"), "datetime64"]:
        with pytest.raises(TypeError, match="(float128|longdouble|datetime64).*int8, int16.*uint64"):
            gpukit.zeros(2, dtype=bad)
    with pytest.raises(TypeError, match="'g'"):
        gpukit.asarray(np.zeros(2, np.longdouble))
    with pytest.raises(TypeError, match="cannot interpret"):
        gpukit.zeros(2, dtype=3)


# --- round trips -------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_numpy_round_trip_on_every_device(device, name):
    """NumPy -> gpukit on the device -> NumPy: the same dtype and bytes."""
    n = np.array(extremes(name), dtype=name).reshape(-1, 1)
    x = gpukit.asarray(n, device=device)
    assert x.dtype == name and x.device == device and x.shape == n.shape
    back = np.asarray(x.cpu())
    assert back.dtype == n.dtype
    assert back.tobytes() == n.tobytes()
    assert np.asarray(x).tobytes() == n.tobytes()  # __array__ for device arrays


@pytest.mark.parametrize("name", DTYPES)
def test_list_round_trip_on_every_device(device, name):
    """A Python list -> gpukit -> tolist()/item(): exact Python numbers
    (integers from their bytes, never through a double)."""
    values = extremes(name)
    x = gpukit.asarray(values, dtype=name, device=device)
    assert x.dtype == name and x.device == device
    assert x.tolist() == values
    kind = bool if name == "bool" else float if name.startswith("float") else int
    for i, value in enumerate(values):
        item = x[i].item()
        assert type(item) is kind and item == value
    assert gpukit.asarray(values[0], dtype=name, device=device).item() == values[0]


@pytest.mark.parametrize("name", INTEGERS)
def test_integer_extremes_are_exact(device, name):
    info = np.iinfo(name)
    low, high = int(info.min), int(info.max)
    x = gpukit.asarray(np.array([low, high], dtype=name), device=device)
    assert x.tolist() == [low, high]
    assert int(x[0]) == low and int(x[1]) == high
    assert x[1].__index__() == high
    assert gpukit.full((2,), high, dtype=name, device=device).tolist() == [high, high]
    # a value out of range is refused, not wrapped
    for outside in [low - 1, high + 1]:
        with pytest.raises(OverflowError, match=name):
            gpukit.asarray([outside], dtype=name, device=device)


def test_uint64_above_int64():
    top = 2 ** 64 - 1
    assert gpukit.asarray(top, dtype=gpukit.uint64).item() == top
    assert gpukit.asarray([2 ** 63, top], dtype="uint64").tolist() == [2 ** 63, top]
    assert gpukit.asarray([2.0 ** 63], dtype="uint64").item() == 2 ** 63  # a float, exact
    with pytest.raises(OverflowError, match="uint64"):
        gpukit.asarray(2 ** 64, dtype="uint64")
    with pytest.raises(OverflowError, match="uint64"):
        gpukit.asarray(-1, dtype="uint64")


@pytest.mark.parametrize("name", INTEGERS)
def test_python_ints_beyond_the_dtype(device, name):
    # As in NumPy 2: comparisons answer by value (uint8 == -1 is false),
    # division and the float functions take the int in the float they
    # compute in, the logical ops as a bool; arithmetic in the dtype itself
    # refuses it.
    info = np.iinfo(name)
    n = np.array([info.min, 0, info.max], dtype=name)
    x = gpukit.asarray(n, device=device)
    comparisons = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
    for outside in [int(info.min) - 1, int(info.max) + 1, 2 ** 80, -2 ** 80]:
        for compare in comparisons:
            assert compare(x, outside).tolist() == [compare(int(v), outside) for v in n]
            assert compare(outside, x).tolist() == [compare(outside, int(v)) for v in n]
        with pytest.raises(OverflowError, match=name):
            x + outside
    outside = int(info.max) + 1
    assert gpukit.logical_and(x, outside).tolist() == [bool(v) for v in n]
    if outside < 2 ** 53:  # exact in float64
        np.testing.assert_array_equal(gpukit.asarray(x / outside, device="cpu"),
                                      n / np.float64(outside))
        assert gpukit.atan2(x, outside).dtype == gpukit.atan2(x, 1).dtype


@pytest.mark.parametrize("name", DTYPES)
def test_dlpack_round_trip(name):
    n = np.array(extremes(name), dtype=name)
    x = gpukit.from_dlpack(n)
    assert x.dtype == name and np.shares_memory(np.asarray(x), n)
    m = np.from_dlpack(x)
    assert m.dtype == n.dtype and m.tobytes() == n.tobytes()
    assert gpukit.from_dlpack(x).tolist() == n.tolist()


@pytest.mark.parametrize("name", DTYPES)
def test_buffer_protocol_round_trip(name):
    n = np.array(extremes(name), dtype=name)
    x = gpukit.asarray(memoryview(n))  # shared: a writable, aligned buffer
    assert x.dtype == name and np.shares_memory(np.asarray(x), n)
    view = memoryview(x)
    assert view.format == memoryview(n).format and view.itemsize == n.itemsize
    assert view.tobytes() == n.tobytes()


@pytest.mark.parametrize("code", "bBhHiIlLqQ")
def test_array_module_typecodes(code):
    values = array.array(code, [0, 1, 100])
    x = gpukit.asarray(values)
    assert x.dtype == np.dtype(code).name and x.tolist() == [0, 1, 100]


def test_nested_lists_of_arrays_promote():
    """Arrays in a list promote as result_type says; Python numbers take
    the defaults (int64, float32) and a float wins over integers."""
    u8, i8 = np.array([1], np.uint8), np.array([-1], np.int8)
    x = gpukit.asarray([u8, i8])
    assert x.dtype == "int16" and x.tolist() == [[1], [-1]]
    assert gpukit.asarray([np.array([1], np.uint16), np.array([2], np.uint32)]).dtype == "uint32"
    assert gpukit.asarray([1, 2]).dtype == "int64"
    assert gpukit.asarray([1, 2.5]).dtype == "float32"
    assert gpukit.asarray([u8, [2.5]]).dtype == "float32"


# --- astype ------------------------------------------------------------------

@pytest.mark.parametrize("name", NEW)
def test_astype_copy_rules(device, name):
    x = gpukit.asarray([1, 2, 3], dtype=name, device=device)
    assert gpukit.astype(x, name, copy=False) is x
    assert x.astype(getattr(gpukit, name), copy=False) is x
    for copied in [gpukit.astype(x, name), gpukit.astype(x, name, copy=True), x.astype(name)]:
        assert copied is not x and copied.dtype == name and copied.tolist() == [1, 2, 3]
    if device == "cpu":  # the copy shares no memory: write the original through NumPy
        copied = gpukit.astype(x, name)
        np.asarray(x)[0] = 9
        assert copied.tolist() == [1, 2, 3] and x.tolist() == [9, 2, 3]
    moved = gpukit.astype(x, name, copy=False, device="cpu")
    assert moved.device == "cpu" and (moved is x) == (device == "cpu")


@pytest.mark.parametrize("target", DTYPES)
@pytest.mark.parametrize("source", DTYPES)
def test_astype_between_every_pair(device, source, target):
    """Conversions as NumPy's astype for values every dtype can take (and
    negative integers into unsigned ones, which wrap in both)."""
    if source == "bool":
        values = [False, True]
    elif source.startswith("float"):
        values = [0.0, 1.5, 100.75] + ([-2.5] if target[0] != "u" else [])
    else:
        values = [0, 1, 100] + ([-1, -100] if source[0] == "i" else [])
    n = np.array(values, dtype=source)
    x = gpukit.asarray(n, device=device)
    y = gpukit.astype(x, target)
    assert y.dtype == target and y.device == device
    assert y.tolist() == n.astype(target).tolist()


def test_astype_errors():
    x = gpukit.asarray([1, 2], dtype="int16")
    with pytest.raises(TypeError, match="float128"):
        gpukit.astype(x, "float128")
    with pytest.raises(TypeError):
        gpukit.astype(x)


# --- the data type functions ---------------------------------------------------

@pytest.mark.parametrize("name", INTEGERS)
def test_iinfo(name):
    ours, theirs = gpukit.iinfo(getattr(gpukit, name)), np.iinfo(name)
    assert (ours.bits, ours.min, ours.max) == (theirs.bits, int(theirs.min), int(theirs.max))
    assert type(ours.min) is int and type(ours.max) is int
    assert ours.dtype is getattr(gpukit, name) and ours.dtype == theirs.dtype
    assert gpukit.iinfo(name) == ours and gpukit.iinfo(np.dtype(name)) == ours
    assert gpukit.iinfo(gpukit.zeros(1, dtype=name)) == ours  # an array's dtype


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_finfo(name):
    ours, theirs = gpukit.finfo(getattr(gpukit, name)), np.finfo(name)
    assert ours.bits == theirs.bits
    for field in ["eps", "max", "min", "smallest_normal"]:
        value = getattr(ours, field)
        assert type(value) is float and value == float(getattr(theirs, field)), field
    assert ours.dtype is getattr(gpukit, name)
    assert gpukit.finfo(gpukit.ones(1, dtype=name)) == ours


def test_finfo_iinfo_errors():
    for dtype in ["float32", "float64", "bool"]:
        with pytest.raises(ValueError, match=f"iinfo.*{dtype}"):
            gpukit.iinfo(dtype)
    for dtype in ["int8", "uint64", "bool"]:
        with pytest.raises(ValueError, match=f"finfo.*{dtype}"):
            gpukit.finfo(dtype)
    with pytest.raises(TypeError, match="float128"):
        gpukit.finfo("float128")
    with pytest.raises(TypeError):
        gpukit.iinfo(3)


def test_can_cast_every_pair():
    for a in DTYPES:
        for b in DTYPES:
            expected = bool(np.can_cast(a, b, "safe"))
            assert gpukit.can_cast(getattr(gpukit, a), getattr(gpukit, b)) is expected, (a, b)
            assert gpukit.can_cast(a, np.dtype(b)) is expected
    x = gpukit.asarray([1], dtype="uint16")
    assert gpukit.can_cast(x, "int32") and not gpukit.can_cast(x, "int16")


def test_can_cast_errors():
    with pytest.raises(TypeError):
        gpukit.can_cast(1, gpukit.int8)  # a Python number is not a dtype (NumPy 2 agrees)
    with pytest.raises(TypeError, match="float128"):
        gpukit.can_cast(gpukit.int8, "float128")
    with pytest.raises(TypeError):
        gpukit.can_cast(gpukit.int8)


def test_result_type_every_pair():
    for a in DTYPES:
        for b in DTYPES:
            expected = np.result_type(a, b)  # int64 with uint64 is float64
            got = gpukit.result_type(getattr(gpukit, a), getattr(gpukit, b))
            assert got is getattr(gpukit, expected.name), (a, b, got, expected)
    x, y = gpukit.asarray([1], dtype="int8"), gpukit.asarray([1], dtype="uint8")
    assert gpukit.result_type(x, y) == "int16"
    assert gpukit.result_type(x, "uint16", np.dtype("float32")) == np.result_type(
        "int8", "uint16", "float32")
    assert gpukit.result_type(gpukit.float64) is gpukit.float64


@pytest.mark.parametrize("name", DTYPES)
def test_result_type_python_scalars_are_weak(name):
    """A Python number takes the kind of the dtype beside it when that kind
    is as high: as NumPy 2 (NEP 50) and the standard."""
    dt = getattr(gpukit, name)
    for scalar in [True, 1, -1, 2 ** 40, 1.0]:
        expected = np.result_type(np.dtype(name), scalar)
        assert gpukit.result_type(dt, scalar) == expected, (name, scalar)
        assert gpukit.result_type(scalar, dt, scalar) == expected
    assert gpukit.result_type(gpukit.bool, 1) is gpukit.int64
    assert gpukit.result_type(gpukit.int8, 1.0) is gpukit.float64
    assert gpukit.result_type(gpukit.float32, 1.0, 1) is gpukit.float32


def test_result_type_errors():
    with pytest.raises(TypeError, match="at least one array or dtype"):
        gpukit.result_type()
    with pytest.raises(TypeError, match="at least one array or dtype"):
        gpukit.result_type(1, 2.5)
    assert gpukit.result_type(gpukit.int8, 1j) == np.result_type(np.int8, 1j)  # complex128
    with pytest.raises(TypeError, match="float128"):
        gpukit.result_type(gpukit.int8, "float128")
    with pytest.raises(TypeError):
        gpukit.result_type(gpukit.int8, [1, 2])


def test_isdtype_every_kind():
    for name in DTYPES:
        dt = getattr(gpukit, name)
        for kind in KINDS:
            assert gpukit.isdtype(dt, kind) is np.isdtype(np.dtype(name), kind), (name, kind)
        assert gpukit.isdtype(dt, dt) and gpukit.isdtype(dt, np.dtype(name))
        assert not any(gpukit.isdtype(dt, getattr(gpukit, other))
                       for other in DTYPES if other != name)
    assert gpukit.isdtype(gpukit.uint16, ("bool", "unsigned integer"))
    assert gpukit.isdtype(gpukit.int8, (gpukit.float32, gpukit.int8))
    assert not gpukit.isdtype(gpukit.int8, ("real floating", gpukit.uint8))
    assert not gpukit.isdtype(gpukit.int8, ())


def test_isdtype_takes_keywords():
    assert gpukit.isdtype(dtype=gpukit.int8, kind="integral")
    assert not gpukit.isdtype(gpukit.int8, kind="real floating")
    with pytest.raises(TypeError):
        gpukit.isdtype(gpukit.int8)


def test_isdtype_errors():
    with pytest.raises(ValueError, match="unknown kind 'integer'"):
        gpukit.isdtype(gpukit.int8, "integer")
    with pytest.raises(ValueError, match="unknown kind"):
        gpukit.isdtype(gpukit.int8, ("bool", "floating"))
    with pytest.raises(TypeError, match="kind"):
        gpukit.isdtype(gpukit.int8, 3)
    with pytest.raises(TypeError, match="tuple of tuples"):
        gpukit.isdtype(gpukit.int8, (("integral",),))
    with pytest.raises(TypeError):
        gpukit.isdtype(3, "integral")
    with pytest.raises(TypeError, match="float128"):
        gpukit.isdtype("float128", "integral")


# --- __array_namespace_info__ ---------------------------------------------------

@pytest.mark.skipif(not any(str(d).startswith("opencl") for d in gpukit.devices()),
                    reason="needs an OpenCL device (PoCL in CI)")
def test_a_device_without_float64_says_so(py):
    """An OpenCL device without double precision (GPUKIT_OPENCL_FP64=0 makes
    PoCL one): dtypes(device=) leaves float64 out, and float64 work there is
    a TypeError naming the device and the fix, before anything runs."""
    py("""
        import gpukit, pytest
        opencl = next(d for d in gpukit.devices() if str(d).startswith("opencl"))
        info = gpukit.__array_namespace_info__()
        assert "float64" not in info.dtypes(device=opencl)
        assert "float32" in info.dtypes(device=opencl)
        assert "float64" in info.dtypes(device="cpu")
        assert list(info.dtypes(device=opencl, kind="real floating")) == ["float32"]
        for make in [lambda: gpukit.zeros(3, dtype="float64", device=opencl),
                     lambda: gpukit.asarray([1, 2], device=opencl) / 2,
                     lambda: gpukit.mean(gpukit.asarray([1, 2], device=opencl))]:
            with pytest.raises(TypeError, match="float64.*float32"):
                make()
        assert gpukit.asarray([1.5], device=opencl).tolist() == [1.5]  # float32 lives there
        # complex128 too needs double precision; complex64 computes there
        assert list(info.dtypes(device=opencl, kind="complex floating")) == ["complex64"]
        with pytest.raises(TypeError, match="complex128.*double precision.*complex64"):
            gpukit.zeros(2, dtype="complex128", device=opencl)
        z = gpukit.asarray([1 + 2j], dtype="complex64", device=opencl)
        assert (z * z).tolist() == [-3 + 4j]
    """, GPUKIT_OPENCL_FP64="0")


def test_namespace_info_dtypes():
    x = gpukit.zeros(2)
    info = x.__array_namespace__().__array_namespace_info__()
    assert isinstance(info, gpukit.__array_namespace_info__)
    standard = DTYPES + ["complex64", "complex128"]
    everything = info.dtypes(device="cpu")
    assert list(everything) == standard  # the standard's order
    assert all(everything[name] is getattr(gpukit, name) for name in standard)
    for kind in KINDS + [("bool", "real floating"), gpukit.uint16]:
        assert list(info.dtypes(device="cpu", kind=kind)) == [
            name for name in standard if gpukit.isdtype(getattr(gpukit, name), kind)], kind
    assert list(info.dtypes(kind="integral")) == INTEGERS
    assert list(info.dtypes(device="cpu", kind="complex floating")) == ["complex64", "complex128"]
    for device in gpukit.devices():  # every device has every dtype (PoCL has fp64)
        assert list(info.dtypes(device=device)) == standard
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="integer")
    with pytest.raises(ValueError):
        info.dtypes(device="gpu:7")


def test_namespace_info_defaults_and_devices():
    info = gpukit.__array_namespace_info__()
    # what the creation functions choose when given no dtype
    defaults = {"real floating": gpukit.zeros(1).dtype,
                "complex floating": gpukit.asarray([1j]).dtype,
                "integral": gpukit.asarray([1]).dtype,
                "indexing": gpukit.argmax(gpukit.zeros(2)).dtype}
    for device in [None] + gpukit.devices():
        assert info.default_dtypes(device=device) == defaults
    assert info.default_dtypes() == {"real floating": gpukit.float32,
                                     "complex floating": gpukit.complex64,
                                     "integral": gpukit.int64, "indexing": gpukit.int64}
    assert isinstance(info.devices(), tuple)  # the standard's type; gpukit.devices() is a list
    assert list(info.devices()) == gpukit.devices()
    assert info.default_device() == gpukit.default_device()
    with gpukit.device(gpukit.devices()[-1]):
        assert info.default_device() == gpukit.devices()[-1]
    capabilities = info.capabilities()
    assert capabilities["max dimensions"] == 8
    assert capabilities["boolean indexing"] is True  # x[mask]
    assert capabilities["data-dependent shapes"] is True  # unique_*, nonzero
    with pytest.raises(TypeError):
        gpukit.__array_namespace_info__(1)
    with pytest.raises(TypeError):
        info.default_dtypes("cpu")  # keyword-only
