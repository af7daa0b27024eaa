"""gpukit.random: random arrays made on their device (Philox4x32-10).

The numbers depend only on the seed, the shape, the dtype and the
parameters, never on the device: the same seed gives the same numbers on
the CPU, CUDA and OpenCL, to the last bit (every device runs the same
double-precision operations, with its own logarithm and cosine, no device
math library).

Give ``seed=`` for one reproducible array. Without it, each call takes the
next seed of the module's sequence: ``seed(n)`` restarts the sequence, so
what follows it is reproducible, and consecutive calls differ. Until the
first ``seed()`` the sequence starts from the operating system's entropy,
as NumPy's default generator does.
"""
import os
import threading

from . import _gpukit

__all__ = ["seed", "uniform", "normal", "rand", "randn"]

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15  # splitmix64's increment

_lock = threading.Lock()
_state = int.from_bytes(os.urandom(8), "little")


def _check_seed(value):
    try:
        value = value.__index__()
    except AttributeError:
        raise TypeError(f"seed must be an int, not {type(value).__name__}") from None
    if not 0 <= value <= _MASK:
        raise ValueError(f"seed {value} is outside 0 .. 2**64 - 1")
    return value


def seed(n):
    """Restarts the module's seed sequence at n (an int in 0 .. 2**64 - 1).

    After seed(n), calls without seed= take splitmix64's outputs for state n
    in turn: the same arrays after every seed(n), on every device.
    """
    global _state
    n = _check_seed(n)
    with _lock:
        _state = n


def _next_seed():
    """The next seed of the sequence: splitmix64, whose outputs for nearby
    states are unrelated (seed(1) does not replay seed(0) shifted)."""
    global _state
    with _lock:
        _state = (_state + _GOLDEN) & _MASK
        z = _state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _seed_for(value):
    return _next_seed() if value is None else _check_seed(value)


def uniform(shape=(), *, low=0.0, high=1.0, seed=None, dtype=None, device=None):
    """An array of shape (an int or a tuple) uniform in [low, high).

    dtype: float32 (default), float64, float16 or bfloat16 (float32's numbers
    rounded, and held to the dtype's values in [low, high): ValueError where
    there are none). device: where to make it (default:
    the current default device). seed: an int for reproducible numbers (the
    same on every device); None takes the next seed of the module's sequence.
    """
    return _gpukit._random_uniform(shape, low, high, _seed_for(seed), dtype, device)


def normal(shape=(), *, mean=0.0, std=1.0, seed=None, dtype=None, device=None):
    """An array of shape (an int or a tuple) from the normal distribution N(mean, std**2).

    dtype: float32 (default), float64, float16 or bfloat16 (float32's numbers
    rounded). device: where to make it (default:
    the current default device). seed: an int for reproducible numbers (the
    same on every device); None takes the next seed of the module's sequence.
    """
    return _gpukit._random_normal(shape, mean, std, _seed_for(seed), dtype, device)


def _shape_of(shape):
    # rand(2, 3) and rand((2, 3)) both mean shape (2, 3), as in PyTorch.
    if len(shape) == 1 and not hasattr(shape[0], "__index__"):
        return tuple(shape[0])
    return shape


def rand(*shape, seed=None, dtype=None, device=None):
    """rand(*shape, seed=None, dtype=None, device=None): uniform numbers in [0, 1).

    rand(2, 3) and rand((2, 3)) are the same; see uniform().
    """
    return uniform(_shape_of(shape), seed=seed, dtype=dtype, device=device)


def randn(*shape, seed=None, dtype=None, device=None):
    """randn(*shape, seed=None, dtype=None, device=None): standard normal numbers.

    randn(2, 3) and randn((2, 3)) are the same; see normal().
    """
    return normal(_shape_of(shape), seed=seed, dtype=dtype, device=device)
