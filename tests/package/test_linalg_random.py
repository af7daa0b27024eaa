"""gpukit.linalg's products and gpukit.random (python/ops.c,
python/gpukit/linalg.py, python/gpukit/random.py): linalg.matmul and
matrix_transpose, and random numbers that are the same on every device for
a seed and have the right distribution. The factorizations are in
test_linalg_factor.py."""
import numpy as np
import pytest

import gpukit as gk

from conftest import DEVICES, host, on

RNG = np.random.default_rng(11)
TOL32 = {"rtol": 1e-4, "atol": 1e-4}


# --- linalg ---

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
