# Type stubs for gpukit.random (random.py has no inline annotations).
from collections.abc import Sequence
from typing import SupportsIndex, overload

from . import Array, device as _device, dtype as _dtype

_Shape = SupportsIndex | Sequence[SupportsIndex]
_DTypeLike = _dtype | str | type
_DeviceLike = _device | str

__all__ = ["seed", "uniform", "normal", "rand", "randn"]

def seed(n: SupportsIndex) -> None: ...
def uniform(
    shape: _Shape = (),
    *,
    low: float = 0.0,
    high: float = 1.0,
    seed: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
) -> Array: ...
def normal(
    shape: _Shape = (),
    *,
    mean: float = 0.0,
    std: float = 1.0,
    seed: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
) -> Array: ...
# rand(2, 3) and rand((2, 3)) are the same.
@overload
def rand(
    shape: Sequence[SupportsIndex],
    /,
    *,
    seed: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
) -> Array: ...
@overload
def rand(
    *shape: SupportsIndex,
    seed: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
) -> Array: ...
@overload
def randn(
    shape: Sequence[SupportsIndex],
    /,
    *,
    seed: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
) -> Array: ...
@overload
def randn(
    *shape: SupportsIndex,
    seed: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
) -> Array: ...
