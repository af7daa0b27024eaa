"""gpukit.linalg and gpukit.random (python/ops.c, python/gpukit/linalg.py,
python/gpukit/random.py): factorizations reconstruct their input and agree
with numpy.linalg; random numbers are the same on every device for a seed
and have the right distribution."""
import inspect

import numpy as np
import pytest

import gpukit as gk

from conftest import DEVICES, host, on

RNG = np.random.default_rng(11)
TOL32 = {"rtol": 1e-4, "atol": 1e-4}
TOL64 = {"rtol": 1e-10, "atol": 1e-10}


def tol(dtype):
    return TOL32 if dtype == "float32" else TOL64


# --- linalg ---

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_svd(device, dtype, shape):
    a = RNG.standard_normal(shape).astype(dtype)
    u, s, vh = gk.linalg.svd(on(a, device), full_matrices=False)
    k = min(shape)
    assert (u.shape, s.shape, vh.shape) == ((shape[0], k), (k,), (k, shape[1]))
    assert u.dtype == s.dtype == vh.dtype == dtype
    assert u.device == s.device == vh.device == gk.device(device)
    U, S, Vh = host(u), host(s), host(vh)
    np.testing.assert_allclose(U @ np.diag(S) @ Vh, a, **tol(dtype))
    ref_u, ref_s, ref_vh = np.linalg.svd(a.astype(np.float64), full_matrices=False)
    np.testing.assert_allclose(S, ref_s, **tol(dtype))
    # singular vectors agree up to sign (the values are distinct here)
    signs = np.sign(np.sum(U * ref_u, axis=0))
    np.testing.assert_allclose(U * signs, ref_u, **tol(dtype))
    np.testing.assert_allclose(Vh * signs[:, None], ref_vh, **tol(dtype))


def test_svd_result_and_full_matrices(device):
    square = on(RNG.standard_normal((3, 3)), device, "float64")
    result = gk.linalg.svd(square)  # full_matrices=True: the same as reduced when square
    assert isinstance(result, gk.linalg.SVDResult)
    assert result.U.shape == (3, 3) and result.S.shape == (3,) and result.Vh.shape == (3, 3)
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        gk.linalg.svd(on(np.ones((3, 2)), device, "float64"))
    with pytest.raises(TypeError, match="float32 or float64"):
        gk.linalg.svd(on([[1, 2], [3, 4]], device, "int32"))
    with pytest.raises(ValueError, match="2-d"):
        gk.linalg.svd(on(np.ones((2, 2, 2)), device, "float32"))
    assert str(inspect.signature(gk.linalg.svd)) == "(x, /, *, full_matrices=True)"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr(device, dtype, shape):
    a = RNG.standard_normal(shape).astype(dtype)
    q, r = gk.linalg.qr(on(a, device))
    k = min(shape)
    assert q.shape == (shape[0], k) and r.shape == (k, shape[1])
    Q, R = host(q), host(r)
    np.testing.assert_allclose(Q @ R, a, **tol(dtype))
    np.testing.assert_allclose(Q.T @ Q, np.eye(k), **tol(dtype))
    np.testing.assert_array_equal(np.tril(R, -1), 0)
    ref_q, ref_r = np.linalg.qr(a.astype(np.float64))
    signs = np.sign(np.diag(R)) * np.sign(np.diag(ref_r))
    np.testing.assert_allclose(R * signs[:, None], ref_r, **tol(dtype))


def test_qr_modes(device):
    wide = on(RNG.standard_normal((2, 4)), device, "float64")
    q, r = gk.linalg.qr(wide, mode="complete")  # m <= n: complete is reduced
    assert isinstance(gk.linalg.qr(wide), gk.linalg.QRResult)
    assert q.shape == (2, 2) and r.shape == (2, 4)
    with pytest.raises(NotImplementedError, match="reduced"):
        gk.linalg.qr(on(np.ones((4, 2)), device, "float64"), mode="complete")
    with pytest.raises(ValueError, match="mode"):
        gk.linalg.qr(wide, mode="r")
    with pytest.raises(TypeError):
        gk.linalg.qr(on([[1, 0], [0, 1]], device, "int64"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_solve_and_inv(device, dtype):
    a = (RNG.standard_normal((4, 4)) + 4 * np.eye(4)).astype(dtype)
    b = RNG.standard_normal(4).astype(dtype)
    bm = RNG.standard_normal((4, 3)).astype(dtype)
    x = host(gk.linalg.solve(on(a, device), on(b, device)))
    np.testing.assert_allclose(a @ x, b, **tol(dtype))
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), **tol(dtype))
    xm = host(gk.linalg.solve(on(a, device), on(bm, device)))
    np.testing.assert_allclose(a @ xm, bm, **tol(dtype))
    inverse = gk.linalg.inv(on(a, device))
    assert inverse.dtype == dtype and inverse.device == gk.device(device)
    np.testing.assert_allclose(a @ host(inverse), np.eye(4), **tol(dtype))
    np.testing.assert_allclose(host(inverse), np.linalg.inv(a.astype(np.float64)),
                               **tol(dtype))


def test_solve_inv_errors(device):
    singular = on([[1.0, 2.0], [2.0, 4.0]], device)
    with pytest.raises(ValueError):
        gk.linalg.inv(singular)
    with pytest.raises(ValueError):
        gk.linalg.solve(singular, on([1.0, 1.0], device))
    with pytest.raises(ValueError, match="square"):
        gk.linalg.inv(on(np.ones((2, 3)), device, "float32"))
    with pytest.raises(ValueError):
        gk.linalg.solve(on(np.eye(3), device, "float32"), on(np.ones(2), device, "float32"))
    with pytest.raises(TypeError):
        gk.linalg.solve(on(np.eye(2), device, "int32"), on([1.0, 2.0], device))


def test_linalg_matmul_and_transpose(device):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(host(gk.linalg.matmul(on(a, device), gk.linalg.matrix_transpose(
        on(a, device)))), a @ a.T, **TOL32)


@pytest.mark.skipif(len(DEVICES) < 2, reason="needs two devices")
def test_linalg_mismatched_devices():
    with pytest.raises(ValueError, match="device"):
        gk.linalg.solve(on(np.eye(2), DEVICES[0], "float32"),
                        on(np.ones(2), DEVICES[1], "float32"))


# --- random ---

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_same_seed_same_numbers_on_every_device(dtype):
    u = [host(gk.random.uniform((1000,), seed=42, dtype=dtype, device=d)) for d in DEVICES]
    n = [host(gk.random.normal((1000,), seed=42, dtype=dtype, device=d)) for d in DEVICES]
    for other in u[1:]:
        np.testing.assert_array_equal(other, u[0])
    for other in n[1:]:
        np.testing.assert_array_equal(other, n[0])
    assert u[0].dtype == dtype and n[0].dtype == dtype
    assert not np.array_equal(u[0], host(gk.random.uniform((1000,), seed=43, dtype=dtype)))


def test_distributions(device):
    u = host(gk.random.uniform((100000,), low=-2.0, high=3.0, seed=1, device=device))
    assert u.dtype == np.float32 and u.shape == (100000,)
    assert u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.03 and abs(u.std() - 5 / np.sqrt(12)) < 0.03
    n = host(gk.random.normal((100, 1000), mean=3.0, std=2.0, seed=2, device=device))
    assert n.shape == (100, 1000)
    assert abs(n.mean() - 3.0) < 0.03 and abs(n.std() - 2.0) < 0.03
    r = gk.random.rand(2, 3, seed=3, device=device)
    assert r.shape == (2, 3) and r.device == gk.device(device)
    assert gk.random.randn((4, 5), seed=3, dtype=gk.float64, device=device).dtype == "float64"
    assert gk.random.uniform(seed=0).shape == ()


def test_seed_sequence():
    gk.random.seed(123)
    first = [host(gk.random.uniform((8,))) for _ in range(3)]
    gk.random.seed(123)
    again = [host(gk.random.uniform((8,))) for _ in range(3)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])  # consecutive calls differ
    gk.random.seed(124)
    assert not np.array_equal(host(gk.random.uniform((8,))), first[0])
    gk.random.seed(5)
    a = host(gk.random.randn(6))
    gk.random.seed(5)
    np.testing.assert_array_equal(host(gk.random.normal(6)), a)
    # an explicit seed does not depend on, nor advance, the sequence
    gk.random.seed(9)
    host(gk.random.uniform(3, seed=0))
    after = host(gk.random.uniform(3))
    gk.random.seed(9)
    np.testing.assert_array_equal(host(gk.random.uniform(3)), after)


@pytest.mark.skipif(len(DEVICES) < 2, reason="needs two devices")
def test_seed_sequence_is_the_same_on_every_device():
    results = []
    for d in DEVICES:
        gk.random.seed(77)
        results.append([host(gk.random.normal((64,), device=d)) for _ in range(2)])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_random_errors():
    with pytest.raises(ValueError, match="floating"):
        gk.random.uniform((3,), seed=0, dtype=gk.int32)
    with pytest.raises(ValueError):
        gk.random.uniform((3,), low=2.0, high=1.0, seed=0)
    with pytest.raises(ValueError):
        gk.random.normal((3,), std=-1.0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        gk.random.seed(-1)
    with pytest.raises(ValueError, match="seed"):
        gk.random.uniform(2, seed=2**64)
    with pytest.raises(TypeError):
        gk.random.seed(1.5)
    with pytest.raises(TypeError):
        gk.random.uniform("x", seed=0)
    with pytest.raises(ValueError):
        gk.random.uniform((-1, 2), seed=0)


def test_docs():
    for module in (gk.linalg, gk.random):
        for name in module.__all__:
            assert getattr(module, name).__doc__, name
