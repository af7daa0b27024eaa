# Type stubs for gpukit.linalg (linalg.py has no inline annotations).
from typing import Literal, NamedTuple

from . import Array, matmul as matmul, matrix_transpose as matrix_transpose

__all__ = ["SVDResult", "QRResult", "svd", "qr", "solve", "inv", "matmul", "matrix_transpose"]

class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array

class QRResult(NamedTuple):
    Q: Array
    R: Array

def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult: ...
def qr(x: Array, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult: ...
def solve(x1: Array, x2: Array, /) -> Array: ...
def inv(x: Array, /) -> Array: ...
