"""NumPy's dispatch protocols on gpukit arrays (__array_ufunc__,
__array_function__): NumPy functions and ufuncs run gpukit's on the array's
device, under NumPy's casting rules and defaults (like= creation makes
NumPy's dtypes); gpukit's LinAlgError is NumPy's; what gpukit lacks is
NumPy's TypeError; and dask.array graphs over gpukit chunks give NumPy's
results on every device."""
import numpy as np
import pytest

import gpukit
from conftest import host

da = pytest.importorskip("dask.array")


def test_ufuncs_and_functions_stay_on_the_device(device):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = gpukit.asarray(a, device=device)
    for got, want in [
        (np.add(x, 1), a + 1),
        (np.add(x, a), a + a),  # a NumPy operand moves to x's device
        (np.sin(x), np.sin(a)),
        (np.power(x, 2), a ** 2),
        (np.add.reduce(x), np.add.reduce(a)),
        (np.maximum.reduce(x, axis=1), np.maximum.reduce(a, axis=1)),
        (np.mean(x), np.mean(a)),
        (np.sum(x, axis=0, keepdims=True), np.sum(a, axis=0, keepdims=True)),
        (np.concatenate([x, x]), np.concatenate([a, a])),
        (np.transpose(x), a.T),
        (np.zeros_like(x, shape=(2, 2)), np.zeros((2, 2))),
        (np.full_like(x, 7.0, shape=(5,)), np.full(5, 7.0)),
        (np.add(x, 1, dtype="f4"), (a + 1).astype(np.float32)),
        # dtype= computes in it, as NumPy's loops: no int8 wrap, no float16 overflow
        (np.add(gpukit.asarray(np.int8([100]), device=device), np.int8(100), dtype=np.int16),
         np.int16([200])),
        (np.matmul(gpukit.asarray(np.int8([[100, 100]]), device=device),
                   gpukit.asarray(np.int8([[100], [100]]), device=device), dtype=np.float64),
         np.float64([[20000]])),
        (np.multiply(gpukit.asarray(np.float16([60000]), device=device), 2, dtype=np.float32),
         np.float32([120000])),
        # bool: the output of comparisons, whose inputs keep their dtype
        (np.less(gpukit.asarray([0.5, 2.0], device=device), 1.5, dtype=bool),
         np.array([True, False])),
        (x.squeeze(), a), (x[:1].squeeze(), a[0]), (x.ravel(), a.ravel()),
    ]:
        assert isinstance(got, gpukit.Array) and got.device == x.device
        np.testing.assert_allclose(host(got), want)
        assert host(got).dtype == want.dtype
    # np.dtype takes gpukit's dtypes; gpukit takes NumPy's type strings
    assert np.dtype(gpukit.float32) == np.float32 and gpukit.float32.type is np.float32
    assert gpukit.ones(2, dtype="<f8", device=device).dtype == gpukit.float64
    assert gpukit.zeros(2, dtype="i4", device=device).dtype == gpukit.int32
    assert gpukit.zeros(2, dtype="b1", device=device).dtype == gpukit.bool


def test_numpys_positional_arguments_and_defaults(device):
    # NumPy's positional arguments that gpukit takes as keywords (the
    # standard's keyword-only ones) arrive under NumPy's names
    z = np.arange(8.0) + 1j
    r = np.arange(9.0).reshape(3, 3) + 3 * np.eye(3)
    g, m = gpukit.asarray(z, device=device), gpukit.asarray(r, device=device)
    for got, want in [
        (np.fft.fft(g, 4), np.fft.fft(z, 4)),
        (np.fft.ifft(g, 16, -1, "ortho"), np.fft.ifft(z, 16, -1, "ortho")),
        (np.fft.fftshift(m, 0), np.fft.fftshift(r, 0)),
        (np.tensordot(m, m, 1), np.tensordot(r, r, 1)),
        (np.linalg.qr(m, "complete").R, np.linalg.qr(r, "complete").R),
        (np.concatenate([m, m], 1), np.concatenate([r, r], 1)),
        (np.sum(m, 0, None, None, True), np.sum(r, 0, None, None, True)),
        (np.clip(m, 1, 5), np.clip(r, 1, 5)),  # gpukit takes these by position too
    ]:
        assert isinstance(got, gpukit.Array) and got.device == g.device
        np.testing.assert_allclose(host(got), want, atol=1e-12)
    # pinv: NumPy's rcond is the standard's rtol, and NumPy's default 1e-15
    # (not max(M, N) * eps) when neither is given
    near = np.float32([[1, 2], [2, 4.000001]])
    n = gpukit.asarray(near, device=device)
    for got, rtol in [(np.linalg.pinv(n), 1e-15), (np.linalg.pinv(n, 1e-3), 1e-3),
                      (np.linalg.pinv(n, rcond=0.5), 0.5), (np.linalg.pinv(n, rtol=None), None)]:
        np.testing.assert_array_equal(host(got), host(gpukit.linalg.pinv(n, rtol=rtol)))
    assert host(np.linalg.pinv(n)).max() > 1e5 > host(np.linalg.pinv(n, rtol=None)).max()
    with pytest.raises(ValueError, match="can't be both set"):
        np.linalg.pinv(n, 1e-3, rtol=1e-3)
    # what gpukit does not take stays an error naming it
    with pytest.raises(TypeError, match="compute_uv"):
        np.linalg.svd(m, False, False)
    # order='F' reads the elements in another order, which gpukit does not:
    # NumPy's TypeError, not C order's values (it only lays out a *_like)
    for call in (lambda: np.reshape(m, (9,), "F"), lambda: np.reshape(m, (9,), order="F"),
                 lambda: np.ravel(m, "A")):
        with pytest.raises(TypeError, match="no implementation"):
            call()
    np.testing.assert_array_equal(host(np.reshape(m, (9,), order="C")), r.reshape(9))
    assert np.zeros_like(m, order="F").shape == (3, 3)
    with pytest.raises(TypeError, match="multiple values"):
        np.fft.fft(g, 8, n=8)


def test_numpys_casting_rules(device):
    x = gpukit.asarray(np.array([1.7, -2.6]), device=device)
    i = gpukit.asarray(np.int8([1, 2]), device=device)
    # a ufunc's dtype= under casting= (same_kind by default), as NumPy checks it
    for call in (lambda: np.add(x, x, dtype=np.int8), lambda: np.invert(x, dtype=np.int8),
                 lambda: np.add(x, 1, dtype=np.float32, casting="safe"),
                 lambda: np.add(i, i, dtype=np.float32, casting="no")):
        with pytest.raises(TypeError, match="Cannot cast ufunc"):
            call()
    assert host(np.add(x, x, dtype=np.int8, casting="unsafe")).tolist() == [2, -4]
    assert host(np.add(i, i, dtype=np.int8, casting="no")).tolist() == [2, 4]
    assert host(np.add(x, x, casting="safe")).tolist() == [3.4, -5.2]
    # a ufunc giving bool takes dtype=bool only
    for call in (lambda: np.less(x, x, dtype=np.float32), lambda: np.isnan(x, dtype=np.float64),
                 lambda: np.equal(i, i, dtype=np.int8)):
        with pytest.raises(TypeError, match="No loop matching"):
            call()
    # can_cast's default rule is safe, not same_kind
    assert not np.can_cast(x, np.float32) and np.can_cast(x, np.complex128)
    assert not np.can_cast(x, np.float32, casting="safe")
    with pytest.raises(TypeError, match="can_cast"):
        np.can_cast(x, np.float32, casting="same_kind")  # gpukit has only the safe rule


def test_numpys_creation_with_like(device):
    # like= a gpukit array: NumPy's dtypes (float64, the data's), on its device
    g = gpukit.asarray(np.arange(3.0), device=device)
    for got, want in [
        (np.zeros(3, like=g), np.zeros(3)),
        (np.ones(2, dtype=np.int8, like=g), np.ones(2, dtype=np.int8)),
        (np.arange(0, 1, 0.25, like=g), np.arange(0, 1, 0.25)),
        (np.arange(5, like=g), np.arange(5)),
        (np.arange(np.float32(0), 1.5, like=g), np.arange(np.float32(0), 1.5)),
        (np.asarray([1.5, 2.5], like=g), np.asarray([1.5, 2.5])),
        (np.asarray([1, 2], dtype=np.float32, like=g), np.asarray([1, 2], dtype=np.float32)),
        (np.full(3, 1j, like=g), np.full(3, 1j)),
        (np.full(3, np.float32(2), like=g), np.full(3, np.float32(2))),
        (np.full(2, 7, like=g), np.full(2, 7)),
        (np.eye(2, 3, 1, like=g), np.eye(2, 3, 1)),
        (np.eye(2, M=3, dtype=np.int8, like=g), np.eye(2, M=3, dtype=np.int8)),
        # NumPy scalars where gpukit takes plain numbers
        (np.full_like(g, np.float64(2.5)), np.full(3, 2.5)),
        (np.full_like(g, np.float32(1.5), shape=(2,)), np.full(2, 1.5)),
    ]:
        assert isinstance(got, gpukit.Array) and got.device == g.device
        np.testing.assert_array_equal(host(got), want, strict=True)  # dtype too
    empty = np.empty((2, 2), like=g)
    assert empty.device == g.device and empty.dtype == gpukit.float64
    assert np.zeros(2, like=g, device="cpu").device == gpukit.device("cpu")


def test_linalg_error_is_numpys(device):
    # once NumPy is imported, gpukit's LinAlgError is NumPy's too, through
    # NumPy's functions and gpukit's own
    singular = gpukit.zeros((2, 2), device=device)
    for call in (lambda: np.linalg.inv(singular), lambda: gpukit.linalg.inv(singular)):
        with pytest.raises(np.linalg.LinAlgError, match="singular") as caught:
            call()
        assert isinstance(caught.value, gpukit.linalg.LinAlgError)
        assert isinstance(caught.value, ValueError)


def test_linalg_error_without_numpy(py):
    # gpukit imports no NumPy for it (that would start NumPy's OpenBLAS)
    py("""
        import sys, gpukit
        try:
            gpukit.linalg.inv(gpukit.zeros((2, 2)))
        except gpukit.linalg.LinAlgError as e:
            assert type(e).__mro__[1] is ValueError, type(e).__mro__
        assert "numpy" not in sys.modules
    """)


def test_what_gpukit_lacks_is_numpys_type_error(device):
    x = gpukit.ones((2, 2), device=device)
    with pytest.raises(TypeError, match="unravel_index|no implementation"):
        np.unravel_index(x, (2, 2))
    with pytest.raises(TypeError):
        np.add(x, 1, out=np.empty((2, 2)))  # out= is NumPy's own memory
    with pytest.raises(TypeError):
        np.add.accumulate(x)
    with pytest.raises(TypeError, match="not supported"):
        gpukit.ones(2, dtype=">f8")  # big-endian: no such dtype here


def test_dask_array_over_gpukit_chunks(device):
    """The tutorial's mean of a (1000, 1000) random array in (100, 100)
    chunks, and more of dask.array, each chunk a gpukit array on `device`."""
    a = np.random.default_rng(0).random((1000, 1000))
    d = da.from_array(gpukit.asarray(a, device=device), chunks=(100, 100), asarray=False)
    assert isinstance(d._meta, gpukit.Array)
    for lazy, want in [
        (d.mean(), a.mean()),
        (d.sum(axis=0), a.sum(axis=0)),
        ((d * 2 + 1).max(), (a * 2 + 1).max()),
        (np.sin(d).min(), np.sin(a).min()),
        (d.std(), a.std()),
        ((d @ d.T)[:5, :5], (a @ a.T)[:5, :5]),
        (d.map_blocks(lambda b: b - b.mean()).sum(), None),
    ]:
        got = lazy.compute(scheduler="threads")
        assert isinstance(got, gpukit.Array) and got.device == gpukit.asarray(
            0.0, device=device).device
        if want is not None:
            np.testing.assert_allclose(host(got), want, rtol=1e-10)
