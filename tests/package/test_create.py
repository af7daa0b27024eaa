"""Array creation: asarray() from Python data, Arrays and NumPy arrays;
empty/zeros/ones/full, arange/linspace/eye and the *_like functions, on
every device, checked against NumPy. Default dtypes follow PyTorch
(float32, int64), as the docstrings say."""
import inspect

import numpy as np
import pytest

import gpukit as gk
from conftest import host, on

DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]


def check(x, expected, dtype, device):
    assert x.dtype == dtype
    assert x.device == device
    assert x.shape == np.shape(expected)
    np.testing.assert_array_equal(host(x), np.asarray(expected, dtype=dtype))


# --- empty, zeros, ones, full ---------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), 3, (2, 3), (0, 4), (1, 2, 1, 2)])
def test_zeros_ones_empty_every_dtype(device, dtype, shape):
    check(gk.zeros(shape, dtype=dtype, device=device), np.zeros(shape), dtype, device)
    check(gk.ones(shape, dtype=dtype, device=device), np.ones(shape), dtype, device)
    e = gk.empty(shape, dtype=dtype, device=device)
    assert (e.shape, e.dtype, e.device) == (np.zeros(shape).shape, dtype, device)


def test_dtype_objects_and_types_are_accepted(device):
    assert gk.zeros(2, dtype=gk.int32, device=device).dtype == "int32"
    assert gk.zeros(2, dtype=np.uint8, device=device).dtype == "uint8"
    assert gk.zeros(2, dtype=np.dtype("float64"), device=device).dtype == "float64"
    assert gk.zeros(2, dtype=bool, device=device).dtype == "bool"
    assert gk.zeros(2, dtype=int, device=device).dtype == "int64"


def test_defaults_float32_and_default_device(device):
    x = gk.zeros((2, 2))
    assert x.dtype == gk.float32 and x.device == "cpu"
    with gk.device(device):
        y = gk.ones(3)
        assert y.device == device
        assert gk.asarray([1, 2]).device == device
        assert gk.arange(3).device == device


def test_device_blocks_nest_and_belong_to_their_thread(device):
    import threading
    gk.set_default_device(None)
    try:
        with gk.device("cpu"):
            with gk.device(device) as inner:
                assert inner == device and gk.default_device() == device
                seen = []
                inside, leave = threading.Event(), threading.Event()

                def other_thread():
                    seen.append(str(gk.zeros(1).device))  # not this thread's block
                    with gk.device(device):
                        inside.set()
                        leave.wait(30)
                    seen.append(str(gk.default_device()))

                worker = threading.Thread(target=other_thread)
                worker.start()
                assert inside.wait(30)
                with gk.device("cpu"):  # this thread's blocks only
                    assert gk.default_device() == "cpu"
                leave.set()
                worker.join()
                assert seen == ["cpu", "cpu"]
                assert gk.default_device() == device
            assert gk.default_device() == "cpu"
        gk.set_default_device(device)  # the process-wide default
        assert gk.ones(1).device == device
        assert threading_default(gk) == device
    finally:
        gk.set_default_device(None)
    assert gk.default_device() == "cpu"


def threading_default(gk):
    import threading
    out = []
    worker = threading.Thread(target=lambda: out.append(str(gk.default_device())))
    worker.start()
    worker.join()
    return out[0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_every_dtype(device, dtype):
    value = {"bool": True, "uint8": 200, "int32": -7, "int64": -(2 ** 40),
             "float32": 2.5, "float64": 1 / 3}[dtype]
    check(gk.full((2, 3), value, dtype=dtype, device=device), np.full((2, 3), value, dtype),
          dtype, device)


def test_full_infers_pytorch_defaults_and_is_exact(device):
    assert gk.full(2, True, device=device).dtype == "bool"
    assert gk.full(2, 3, device=device).dtype == "int64"
    assert gk.full(2, 3.0, device=device).dtype == "float32"
    big = 2 ** 62 + 1  # not a double: must not go through one
    assert gk.full(3, big, device=device).tolist() == [big] * 3
    assert gk.full((), 2.9, dtype="int32", device=device).item() == 2  # truncates like NumPy
    assert gk.full(2, np.float32(1.5), device=device).tolist() == [1.5, 1.5]
    assert gk.full(2, np.int32(3), dtype="uint8", device=device).tolist() == [3, 3]


def test_full_errors(device):
    with pytest.raises(OverflowError):
        gk.full(2, 300, dtype="uint8", device=device)
    with pytest.raises(OverflowError):
        gk.full(2, -1, dtype="uint8", device=device)
    with pytest.raises(TypeError):
        gk.full(2, "x", device=device)
    with pytest.raises(ValueError):
        gk.full(2, float("nan"), dtype="int32", device=device)


def test_bad_shapes_dtypes_devices():
    with pytest.raises(ValueError):
        gk.zeros((2, -1))
    with pytest.raises(ValueError):
        gk.zeros(-3)
    with pytest.raises(ValueError):
        gk.zeros((1,) * 9)
    with pytest.raises(TypeError):
        gk.zeros(2.5)
    with pytest.raises(TypeError):
        gk.zeros((2, "3"))
    with pytest.raises(TypeError):
        gk.zeros("abc")
    with pytest.raises(TypeError):
        gk.zeros(3, dtype="float128")
    with pytest.raises(TypeError):
        gk.zeros(3, dtype=object())
    with pytest.raises(ValueError) as bad_device:
        gk.zeros(3, device="tpu:0")
    # the names it takes, once, and where the devices are listed
    assert str(bad_device.value) == ("'tpu:0' is not a device name: use cpu, cuda, cuda:N, "
                                     "opencl or opencl:P:D (gpukit.devices() lists them)")
    with pytest.raises(TypeError):
        gk.zeros(3, device=5)
    with pytest.raises(TypeError):
        gk.zeros(3, float32=True)
    with pytest.raises(TypeError):
        gk.zeros()
    with pytest.raises(TypeError):
        gk.zeros(3, "float32")  # dtype is keyword-only


# --- arange, linspace, eye --------------------------------------------------

@pytest.mark.parametrize("args", [(5,), (2, 9), (9, 2, -2), (0, 10, 3), (-3, 3), (4, 4), (5, 0)])
def test_arange_integers(device, args):
    check(gk.arange(*args, device=device), np.arange(*args), "int64", device)


@pytest.mark.parametrize("args", [(0, 1, 0.25), (1.5,), (2.0, -1.0, -0.5), (0, 1, 0.1)])
def test_arange_floats(device, args):
    x = gk.arange(*args, device=device)
    assert x.dtype == "float32" and x.device == device
    np.testing.assert_allclose(host(x), np.arange(*args), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES[1:])
def test_arange_every_dtype(device, dtype):
    check(gk.arange(1, 7, 2, dtype=dtype, device=device), np.arange(1, 7, 2), dtype, device)
    check(gk.arange(0, stop=4, dtype=dtype, device=device), np.arange(4), dtype, device)


@pytest.mark.parametrize("args", [(10 ** 17, 10 ** 17 + 5), (2 ** 53 + 1, 2 ** 53 + 4),
                                  (0, 9007199254741024, 428914250225763), (-2 ** 63, -2 ** 63 + 3),
                                  (2 ** 62, -2 ** 62, -2 ** 61)])
def test_arange_integers_beyond_doubles(device, args):
    # exact where doubles are not (beyond 2^53), as NumPy's
    assert gk.arange(*args, device=device).tolist() == np.arange(*args).tolist()


SEQUENCE_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                   "float32", "float64"]


@pytest.mark.parametrize("dtype", SEQUENCE_DTYPES)
def test_long_sequences_are_start_plus_index_times_step(device, dtype):
    """Every value is start + i * step computed in double and converted
    like a cast (integers saturate), bit for bit, over several of the
    CPU's threaded chunks; integers in the dtype's range take an integer
    path there, which must give the same values. An integer start and
    step give NumPy's values in an integer dtype: past its range they wrap
    around, and a start outside it is an OverflowError. (64-bit integers
    beyond doubles are exact: test_arange_integers_beyond_doubles.)"""
    info = np.iinfo(dtype) if dtype[0] in "iu" else None
    n = 3 * 65536 + 7
    cases = [(0, 1), (-70000, 1), (5, 3), (n, -1), (0.5, 0.25), (-1.0, -1e-3), (0, 1.5)]
    if info is not None and info.bits < 64:  # the range's ends from each side, and beyond
        cases += [(int(info.min), 1), (int(info.max), -1), (int(info.max) - 100, 1),
                  (int(info.min) + 100, -1)]
    for start, step in cases:
        stop = start + n * step
        if info is not None and isinstance(start + step, int):
            if not info.min <= start <= info.max:
                with pytest.raises(OverflowError, match="out of bounds"):
                    gk.arange(start, stop, step, dtype=dtype, device=device)
                continue
            np.testing.assert_array_equal(host(gk.arange(start, stop, step, dtype=dtype,
                                                         device=device)),
                                          np.arange(start, stop, step, dtype=dtype))
            continue
        x = gk.arange(start, stop, step, dtype=dtype, device=device)
        doubles = start + np.arange(x.shape[0], dtype=np.float64) * step
        if info is not None:
            doubles = np.clip(np.trunc(doubles), float(info.min), float(info.max))
            expected = np.array([int(v) for v in doubles], dtype=dtype)
        else:
            expected = doubles.astype(dtype)
        assert x.dtype == dtype
        np.testing.assert_array_equal(host(x), expected, err_msg=f"start {start} step {step}")


@pytest.mark.parametrize("args,dtype", [
    ((300,), "uint8"), ((300,), "int8"), ((250, 260), "uint8"), ((0, 300, 50), "int8"),
    ((200, -100, -60), "uint8"), ((10, 0, -1), "uint64"), ((70000,), "int16"),
    ((2 ** 31 - 2, 2 ** 31 + 2), "int32"), ((2 ** 32 - 2, 2 ** 32 + 1), "uint32"),
    ((255, 256, 1), "uint8"), ((300, 0), "uint8"), ((0, 1, -1), "uint8")])
def test_arange_wraps_past_an_integer_dtype_as_numpy(device, args, dtype):
    # NumPy converts the first two values and extrapolates in the dtype
    check(gk.arange(*args, dtype=dtype, device=device), np.arange(*args, dtype=dtype), dtype,
          device)


@pytest.mark.parametrize("args,dtype", [((250, 260), "int8"), ((-5, 5), "uint8"),
                                        ((0, -3, -1), "uint8"), ((0, 2 ** 40, 2 ** 37), "int32")])
def test_arange_refuses_first_values_outside_the_dtype(device, args, dtype):
    with pytest.raises(OverflowError, match="out of bounds for " + dtype):
        np.arange(*args, dtype=dtype)
    with pytest.raises(OverflowError, match="out of bounds for " + dtype):
        gk.arange(*args, dtype=dtype, device=device)


def test_arange_errors(device):
    with pytest.raises(ValueError):
        gk.arange(0, 10, 0, device=device)
    with pytest.raises(TypeError):
        gk.arange("a")
    with pytest.raises(TypeError):
        gk.arange()


@pytest.mark.parametrize("start,stop,num,endpoint",
                         [(0, 1, 5, True), (0, 1, 5, False), (-2, 7, 10, True), (3, 3, 4, True),
                          (1, 0, 3, True), (0, 1, 1, True), (0, 1, 1, False), (0, 1, 0, True)])
def test_linspace(device, start, stop, num, endpoint):
    x = gk.linspace(start, stop, num, endpoint=endpoint, device=device)
    assert x.dtype == "float32" and x.shape == (num,)
    np.testing.assert_allclose(host(x), np.linspace(start, stop, num, endpoint=endpoint),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_dtypes_and_keyword_num(device, dtype):
    x = gk.linspace(0, 2, num=9, dtype=dtype, device=device)
    assert x.dtype == dtype
    np.testing.assert_allclose(host(x), np.linspace(0, 2, 9), rtol=1e-6)
    with pytest.raises(TypeError):
        gk.linspace(0, 1, 2.5)
    with pytest.raises(ValueError):
        gk.linspace(0, 1, -1)


def test_linspace_complex(device):
    # the standard's complex ends: each part evenly spaced, complex64 by default
    x = gk.linspace(0, 1 + 2j, 3, device=device)
    assert x.dtype == "complex64" and x.tolist() == [0j, 0.5 + 1j, 1 + 2j]
    y = gk.linspace(1j, 2, 4, endpoint=False, dtype="complex128", device=device)
    np.testing.assert_array_equal(host(y), np.linspace(1j, 2, 4, endpoint=False))
    with pytest.raises(TypeError, match="complex dtype"):
        gk.linspace(0, 1j, 3, dtype="float32", device=device)


@pytest.mark.parametrize("n,m,k", [(0, None, 2 ** 63), (2, 3, -2 ** 70), (3, None, -2 ** 63)])
def test_eye_diagonal_beyond_int64(device, n, m, k):
    check(gk.eye(n, m, k=k, device=device), np.zeros((n, m if m else n)), "float32", device)


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (1, None, 0), (0, None, 0), (3, 5, 0),
                                   (5, 3, 0), (4, 4, 1), (4, 4, -2), (3, 5, 2), (5, 3, -1),
                                   (3, 3, 7), (3, 3, -3)])
def test_eye(device, n, m, k):
    check(gk.eye(n, m, k=k, device=device), np.eye(n, m, k=k), "float32", device)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eye_every_dtype(device, dtype):
    check(gk.eye(3, dtype=dtype, device=device), np.eye(3), dtype, device)
    check(gk.eye(2, 3, k=1, dtype=dtype, device=device), np.eye(2, 3, k=1), dtype, device)


# --- *_like -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_like_functions(device, dtype):
    x = gk.zeros((2, 3), dtype=dtype, device=device)
    check(gk.zeros_like(x), np.zeros((2, 3)), dtype, device)
    check(gk.ones_like(x), np.ones((2, 3)), dtype, device)
    e = gk.empty_like(x)
    assert (e.shape, e.dtype, e.device) == ((2, 3), dtype, device)
    check(gk.full_like(x, 1), np.ones((2, 3)), dtype, device)
    check(gk.ones_like(x, dtype="float64"), np.ones((2, 3)), "float64", device)
    check(gk.zeros_like(x, device="cpu"), np.zeros((2, 3)), dtype, "cpu")


def test_full_like_keeps_dtype_and_truncates(device):
    x = gk.arange(4, dtype="int32", device=device)
    check(gk.full_like(x, 2.7), [2, 2, 2, 2], "int32", device)
    check(gk.full_like(x, fill_value=2.5, dtype="float64"), [2.5] * 4, "float64", device)
    check(gk.zeros_like([[1, 2]], device=device), [[0, 0]], "int64", device)


# --- asarray ----------------------------------------------------------------

@pytest.mark.parametrize("data,dtype", [
    ([True, False], "bool"),
    ([1, 2, 3], "int64"),
    ([1, 2.5], "float32"),
    ([True, 2], "int64"),
    ([[1, 2], [3, 4]], "int64"),
    (((1.0, 2.0), (3.0, 4.0)), "float32"),
    ([[True], [False]], "bool"),
    ([[[1], [2]], [[3], [4]]], "int64"),
    ([[1, 2], (3, 4.5)], "float32"),
])
def test_asarray_infers_pytorch_dtypes(device, data, dtype):
    check(gk.asarray(data, device=device), np.array(data), dtype, device)


@pytest.mark.parametrize("dtype", DTYPES)
def test_asarray_lists_every_dtype(device, dtype):
    data = [[0, 1, 2], [3, 1, 0]]
    check(gk.asarray(data, dtype=dtype, device=device), np.array(data), dtype, device)
    floats = [0.0, 1.75, -0.0] if dtype != "uint8" else [0.0, 1.75, 2.5]
    check(gk.asarray(floats, dtype=dtype, device=device), np.array(floats).astype(dtype),
          dtype, device)


@pytest.mark.parametrize("value,dtype", [(True, "bool"), (7, "int64"), (-2.5, "float32")])
def test_asarray_scalars_are_0d(device, value, dtype):
    x = gk.asarray(value, device=device)
    assert x.shape == () and x.ndim == 0 and x.dtype == dtype
    assert x.item() == value and type(x.item()) is type(value)


def test_asarray_empty_and_exact_big_ints(device):
    check(gk.asarray([], device=device), np.zeros(0), "float32", device)
    check(gk.asarray([[], []], device=device), np.zeros((2, 0)), "float32", device)
    check(gk.asarray([], dtype="int32", device=device), np.zeros(0), "int32", device)
    big = [2 ** 63 - 1, -(2 ** 63), 2 ** 53 + 1]
    assert gk.asarray(big, device=device).tolist() == big
    assert gk.asarray(range(4), device=device).tolist() == [0, 1, 2, 3]


def test_asarray_ragged_and_deep_lists():
    for ragged in ([[1, 2], [3]], [1, [2]], [[1], 2], [[1, 2], [[3, 4]]], [[[1]], [2]]):
        with pytest.raises(ValueError):
            gk.asarray(ragged)
    deep = 1
    for _ in range(9):
        deep = [deep]
    with pytest.raises(ValueError):
        gk.asarray(deep)
    assert gk.asarray(deep[0]).shape == (1,) * 8


def test_asarray_bad_objects():
    for bad in ("abc", None, {"a": 1}, {1, 2}, object(), [1, "a"], [None]):
        with pytest.raises(TypeError):
            gk.asarray(bad)
    with pytest.raises(TypeError):
        gk.asarray([1], dtype="float128")
    with pytest.raises(OverflowError):
        gk.asarray([1, 300], dtype="uint8")
    with pytest.raises(OverflowError):
        gk.asarray([2 ** 64])
    with pytest.raises(TypeError):
        gk.asarray()


def test_asarray_of_arrays_and_copy_rules(device):
    x = gk.asarray([1.0, 2.0], device=device)
    assert gk.asarray(x) is x
    assert gk.asarray(x, copy=False) is x
    assert gk.asarray(x, dtype="float32", device=device) is x
    y = gk.asarray(x, copy=True)
    assert y is not x
    y[0] = 5
    assert x.tolist() == [1.0, 2.0]
    check(gk.asarray(x, dtype="int32"), [1, 2], "int32", device)
    check(gk.asarray(x, device="cpu"), [1.0, 2.0], "float32", "cpu")
    check(gk.asarray(x, device="cpu", dtype="float64"), [1.0, 2.0], "float64", "cpu")
    with pytest.raises(ValueError):
        gk.asarray(x, dtype="float64", copy=False)
    with pytest.raises(ValueError):
        gk.asarray([1, 2], copy=False)
    with gk.device("cpu"):
        assert gk.asarray(x).device == device  # an Array keeps its device


def test_copies_keep_or_make_c_order_as_numpy(device):
    """asarray(copy=True) and astype keep the memory order (NumPy's order
    'K': a copy of a transposed array is a straight copy of its memory);
    copy() is C-contiguous, as NumPy's and CuPy's."""
    base = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = on(base, device).T
    copies = {"asarray": gk.asarray(x, copy=True), "astype": x.astype("float32", copy=True),
              "astype64": x.astype("float64"), "copy": x.copy()}
    for name, copied in copies.items():
        np.testing.assert_array_equal(host(copied), base.T)
        size = np.dtype(str(copied.dtype)).itemsize
        c_strides = (3 * size, size)
        assert (copied.strides == c_strides) == (name == "copy"), (name, copied.strides)
    assert np.asarray(base.T, copy=True).flags["F_CONTIGUOUS"]  # NumPy's own rule


def test_copy_arguments_refuse_strings():
    """copy= takes True, False or None; a string's truth is not what it
    says (copy="False", NumPy 1's "never" would copy), so it is refused
    everywhere, with NumPy 2's ValueError (a CPU array: the argument is read
    before any device matters)."""
    x = gk.asarray([1.0, 2.0], device="cpu")
    calls = [lambda c: gk.asarray(x, copy=c), lambda c: gk.from_dlpack(x, copy=c),
             lambda c: x.__dlpack__(copy=c), lambda c: x.__array__(copy=c),
             lambda c: gk.reshape(x, (2,), copy=c), lambda c: x.astype("float32", copy=c),
             lambda c: x.to(copy=c), lambda c: gk.meshgrid(x, copy=c)]
    for call in calls:
        for text in ("False", "never", b""):
            with pytest.raises(ValueError, match="copy must be True, False or None"):
                call(text)
        call(False if call is not calls[0] else None)  # the real values still work


def test_asarray_lists_of_arrays(device):
    a = gk.asarray([1, 2], dtype="int32", device=device)
    b = gk.asarray([3.5, 4.5], dtype="float64")
    check(gk.asarray([a, a], device=device), [[1, 2], [1, 2]], "int32", device)
    check(gk.asarray([a, b], device=device), [[1, 2], [3.5, 4.5]], "float64", device)
    check(gk.asarray([np.arange(2), [5, 6]], device=device), [[0, 1], [5, 6]], "int64", device)
    check(gk.asarray([gk.asarray(1.5), 2], device=device), [1.5, 2], "float32", device)
    with pytest.raises(ValueError):
        gk.asarray([a, gk.asarray([1, 2, 3])])


@pytest.mark.parametrize("dtype", DTYPES)
def test_asarray_numpy_keeps_dtype(device, dtype):
    data = np.arange(6).reshape(2, 3).astype(dtype)
    check(gk.asarray(data, device=device), data, dtype, device)
    check(gk.asarray(data[:, ::-2], device=device), data[:, ::-2], dtype, device)
    check(gk.asarray(np.asarray(data[0, 1]), device=device), data[0, 1], dtype, device)


def test_asarray_numpy_shares_cpu_memory():
    data = np.arange(4, dtype=np.float32)
    x = gk.asarray(data)
    y = gk.asarray(data, copy=True)
    z = gk.asarray(data, copy=False)
    data[0] = 9
    assert x.tolist() == [9, 1, 2, 3] and z.tolist() == [9, 1, 2, 3]
    assert y.tolist() == [0, 1, 2, 3]
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    assert gk.asarray(frozen).tolist() == [0.0, 1.0, 2.0]  # copied: Arrays are writable
    with pytest.raises(ValueError):
        gk.asarray(frozen, copy=False)
    with pytest.raises(ValueError):
        gk.asarray(data, dtype="float64", copy=False)


def test_signatures_for_help():
    assert str(inspect.signature(gk.asarray)) == "(obj, /, *, dtype=None, device=None, copy=None)"
    assert str(inspect.signature(gk.zeros)) == "(shape, *, dtype=None, device=None)"
    assert str(inspect.signature(gk.arange)) == \
        "(start, /, stop=None, step=1, *, dtype=None, device=None)"
    assert str(inspect.signature(gk.linspace)) == \
        "(start, stop, /, num, *, dtype=None, device=None, endpoint=True)"
    assert str(inspect.signature(gk.eye)) == \
        "(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)"
    for f in (gk.empty, gk.ones, gk.full, gk.empty_like, gk.zeros_like, gk.ones_like,
              gk.full_like):
        inspect.signature(f)
        assert "dtype" in f.__doc__
