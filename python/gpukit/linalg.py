"""gpukit.linalg: the array API's linalg extension (part of it so far).

SVD, QR, solve and inv take 2-d float32 or float64 matrices (an integer
matrix is a TypeError: convert it with ``gpukit.astype(x, gpukit.float64)``)
and return arrays on the input's device. They are computed by LAPACK on the
host whatever the device (the matrix is copied there and the results back),
as are svdvals, matrix_rank, pinv, matrix_power of a negative power and
the norms built on singular values (one matrix of a stack at a time).
matmul, tensordot,
vecdot, diagonal, trace, outer, cross, vector_norm and the other matrix
norms run on the device itself.
"""
from collections import namedtuple

from . import _gpukit
from ._gpukit import matmul, matrix_transpose  # noqa: F401  (the standard's linalg names)

from ._gpukit import tensordot, vecdot  # noqa: F401  (the standard's linalg names too)

__all__ = ["SVDResult", "QRResult", "svd", "qr", "solve", "inv", "matmul", "matrix_transpose",
           "tensordot", "vecdot", "diagonal", "trace", "outer", "cross", "vector_norm",
           "matrix_norm", "svdvals", "matrix_rank", "pinv", "matrix_power"]

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


def diagonal(x, /, *, offset=0):
    """The diagonal of each matrix over x's last two axes, as a view.

    offset=0 is the main diagonal, offset > 0 one above it, offset < 0 one
    below it. The result has x's leading axes and then the diagonal.
    """
    return _gpukit._linalg_diagonal(x, offset)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the diagonal (see diagonal()) of each matrix over x's last two axes.

    dtype=None sums in x's dtype (integers and bool in int64, as sum());
    another dtype converts x to it first.
    """
    if dtype is not None:
        x = _gpukit.astype(x, dtype)
    result = _gpukit._linalg_trace(x, offset)
    return _gpukit.astype(result, dtype) if dtype is not None else result


def outer(x1, x2, /):
    """The outer product of two vectors: out[i, j] = x1[i] * x2[j]."""
    return _gpukit._linalg_outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of the 3-element vectors along axis of x1 and x2 broadcast together."""
    return _gpukit._linalg_cross(x1, x2, axis)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ord-norm of the vectors over axis (None: every element; an int or a tuple).

    ord=inf is max(abs(x)), -inf min(abs(x)), 0 the count of nonzero
    elements, any other p sum(abs(x)**p)**(1/p) (NumPy's). The result is
    floating: a complex x gives its parts' dtype.
    """
    return _gpukit._linalg_vector_norm(x, axis, keepdims, ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The ord-norm of each matrix over x's last two axes.

    ord: 'fro' (Frobenius), 'nuc' (the sum of the singular values), 1 / -1
    (the largest / smallest column sum of abs(x)), inf / -inf (row sums), 2
    / -2 (the largest / smallest singular value). The singular-value norms
    are computed by LAPACK on the host.
    """
    return _gpukit._linalg_matrix_norm(x, keepdims, ord)


def svdvals(x, /):
    """The singular values of each matrix over x's last two axes, descending (LAPACK, on the host)."""
    return _gpukit._linalg_svdvals(x)


def matrix_rank(x, /, *, rtol=None):
    """The rank of each matrix over x's last two axes, as int64.

    The singular values above rtol times the largest count; rtol=None is
    max(m, n) times the dtype's machine epsilon (the standard's default).
    """
    return _gpukit._linalg_matrix_rank(x, rtol)


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse (n, m) of each (m, n) matrix over x's last two axes.

    Singular values up to rtol times the largest are taken as zero; rtol=None
    as matrix_rank's.
    """
    return _gpukit._linalg_pinv(x, rtol)


def matrix_power(x, n, /):
    """Each square matrix over x's last two axes to the integer power n.

    n=0 gives the identity, a negative n the inverse's power (a singular
    matrix is then a ValueError).
    """
    return _gpukit._linalg_matrix_power(x, n)
