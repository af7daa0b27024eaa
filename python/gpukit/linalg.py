"""gpukit.linalg: matrix factorizations and solvers (the array API's linalg names).

SVD, QR, solve and inv take 2-d float32 or float64 matrices (an integer
matrix is a TypeError: convert it with ``gpukit.astype(x, gpukit.float64)``)
and return arrays on the input's device. They are computed by LAPACK on the
host whatever the device (the matrix is copied there and the results back);
matmul runs on the device itself.
"""
from collections import namedtuple

from . import _gpukit
from ._gpukit import matmul, matrix_transpose  # noqa: F401  (the standard's linalg names)

__all__ = ["SVDResult", "QRResult", "svd", "qr", "solve", "inv", "matmul", "matrix_transpose"]

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
SVDResult.__doc__ = "svd()'s result: x = U @ diag(S) @ Vh."

QRResult = namedtuple("QRResult", ["Q", "R"])
QRResult.__doc__ = "qr()'s result: x = Q @ R, Q with orthonormal columns, R upper triangular."


def svd(x, /, *, full_matrices=True):
    """The singular value decomposition x = U @ diag(S) @ Vh, as SVDResult(U, S, Vh).

    x is an (m, n) matrix; with k = min(m, n), U is (m, k), S holds the k
    singular values in descending order and Vh is (k, n) (the reduced SVD).
    gpukit computes only the reduced SVD: full_matrices=True (the standard's
    and NumPy's default) gives the same result for a square matrix and raises
    NotImplementedError for a non-square one; pass full_matrices=False.
    """
    return SVDResult(*_gpukit._linalg_svd(x, full_matrices))


def qr(x, /, *, mode="reduced"):
    """The QR decomposition x = Q @ R, as QRResult(Q, R).

    x is an (m, n) matrix; with k = min(m, n), mode="reduced" gives Q (m, k)
    with orthonormal columns and R (k, n) upper triangular. mode="complete"
    is the same when m <= n and raises NotImplementedError when m > n.
    """
    return QRResult(*_gpukit._linalg_qr(x, mode))


def solve(x1, x2, /):
    """The solution y of x1 @ y = x2 for a square, invertible matrix x1.

    x2 is a vector of length n (the result is one too) or an (n, k) matrix
    of k right-hand sides. A singular x1 is a ValueError.
    """
    return _gpukit._linalg_solve(x1, x2)


def inv(x, /):
    """The inverse of the square matrix x (a singular one is a ValueError)."""
    return _gpukit._linalg_inv(x)
