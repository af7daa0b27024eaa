# Type stubs for gpukit._jit (the @gpukit.jit decorator and the names its
# kernels call; _jit.py is thin glue over the extension's JitKernel).
from collections.abc import Callable
from typing import Any, TypeVar, overload

from . import Array, JitKernel as JitKernel, JitLaunch as JitLaunch, Vectorize as Vectorize, _DeviceLike

__all__ = [
    "jit", "grid", "gridsize", "syncthreads", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "shared", "atomic", "to_device", "vectorize", "JitKernel", "JitLaunch", "Vectorize",
]

_F = TypeVar("_F", bound=Callable[..., Any])

@overload
def jit(function: Callable[..., Any], *, device: bool = False) -> JitKernel: ...
@overload
def jit(function: None = None, *, device: bool = False) -> Callable[[Callable[..., Any]], JitKernel]: ...
def to_device(array: Any, device: _DeviceLike | None = None) -> Array: ...
@overload
def vectorize(signatures: Callable[..., Any]) -> Vectorize: ...
@overload
def vectorize(signatures: str | list[str] | None = None) -> Callable[[Callable[..., Any]], Vectorize]: ...
def grid(ndim: int) -> Any: ...
def gridsize(ndim: int) -> Any: ...
def syncthreads() -> None: ...

class _Dim3:
    x: int
    y: int
    z: int
    def __init__(self, name: str) -> None: ...

threadIdx: _Dim3
blockIdx: _Dim3
blockDim: _Dim3
gridDim: _Dim3

class _Shared:
    @staticmethod
    def array(shape: int | tuple[int, ...], dtype: Any) -> Any: ...

class _Atomic:
    @staticmethod
    def add(array: Any, index: Any, value: Any) -> Any: ...
    @staticmethod
    def max(array: Any, index: Any, value: Any) -> Any: ...
    @staticmethod
    def min(array: Any, index: Any, value: Any) -> Any: ...

shared: _Shared
atomic: _Atomic
_INTRINSICS: dict[str, object]
def _find(module: str, qualname: str) -> Any: ...
