"""gpukit.linalg: the array API's linalg extension (2025.12), complete.

The factorizations (cholesky, det, eig, eigh, eigvals, eigvalsh, inv, qr,
slogdet, solve, svd, svdvals, and pinv, matrix_rank, matrix_power of a
negative power and the singular-value norms built on them) take a matrix
or a stack of matrices (the last two axes; the axes before them are the
batch) of float32, float64, complex64 or complex128 (integers and bool
compute in float64, as NumPy; float16 and bfloat16 are a TypeError). They
return arrays on the input's device. solve, inv, det, slogdet,
cholesky, eigh, eigvalsh, qr, svd and svdvals of CUDA arrays run on the
GPU through cuSOLVER and cuBLAS when the toolkit has them (a stack of
matrices up to 32 x 32 in one batched call); everything else is computed
by LAPACK on the host: the stack is copied there and the results back. On
the host, a stack of small matrices (or of at least one per CPU thread)
is shared out among the CPU's threads, a matrix each, where NumPy's loop
runs on one core; larger ones go one at a time, each threaded by OpenBLAS.
matmul, tensordot, vecdot, diagonal, trace, outer, cross, vector_norm and
the other matrix norms run on the device itself.

A singular matrix (inv, solve), one that is not positive definite
(cholesky), or a factorization that does not converge raises LinAlgError, a
ValueError, naming the matrix of the stack; det and slogdet of a singular
matrix give 0 and (0, -inf), as NumPy does.
"""
from collections import namedtuple

from . import _gpukit
from ._gpukit import _LinAlgError as LinAlgError  # a ValueError, as NumPy's
from ._gpukit import matmul, matrix_transpose  # noqa: F401  (the standard's linalg names)

from ._gpukit import tensordot, vecdot  # noqa: F401  (the standard's linalg names too)

__all__ = ["LinAlgError", "SVDResult", "QRResult", "SlogdetResult", "EighResult", "EigResult",
           "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
SVDResult.__doc__ = "svd()'s result: x = U @ diag(S) @ Vh."

QRResult = namedtuple("QRResult", ["Q", "R"])
QRResult.__doc__ = "qr()'s result: x = Q @ R, Q with orthonormal columns, R upper triangular."

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SlogdetResult.__doc__ = "slogdet()'s result: det(x) = sign * exp(logabsdet)."

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EighResult.__doc__ = "eigh()'s result: x = Q @ diag(L) @ Q^H, L the eigenvalues, Q the vectors."

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EigResult.__doc__ = "eig()'s result: x @ V = V @ diag(L), L the eigenvalues, V the vectors."


def svd(x, /, *, full_matrices=True):
    """The singular value decomposition x = U @ diag(S) @ Vh, as SVDResult(U, S, Vh).

    For each (m, n) matrix, with k = min(m, n): S holds the k singular
    values in descending order (a real dtype: float32 for complex64);
    full_matrices=True gives U (m, m) and Vh (n, n), False the reduced U
    (m, k) and Vh (k, n). A matrix with NaN or infinity raises LinAlgError.
    """
    return SVDResult(*_gpukit._linalg_svd(x, full_matrices))


def svdvals(x, /):
    """The singular values of each matrix over x's last two axes, descending (svd's S)."""
    return _gpukit._linalg_svdvals(x)


def qr(x, /, *, mode="reduced"):
    """The QR decomposition x = Q @ R, as QRResult(Q, R).

    For each (m, n) matrix, with k = min(m, n): mode="reduced" gives Q (m, k)
    with orthonormal columns and R (k, n) upper triangular; mode="complete"
    gives Q (m, m) and R (m, n).
    """
    return QRResult(*_gpukit._linalg_qr(x, mode))


def solve(x1, x2, /):
    """The solution of x1 @ y = x2 for each square, invertible matrix of x1.

    A 1-d x2 of length n is one right-hand side for every matrix (the result
    has x1's batch and length n); otherwise x2 is a stack of (n, k) matrices
    whose batch broadcasts with x1's. A singular x1 raises LinAlgError.
    """
    return _gpukit._linalg_solve(x1, x2)


def inv(x, /):
    """The inverse of each square matrix of x (a singular one raises LinAlgError)."""
    return _gpukit._linalg_inv(x)


def det(x, /):
    """The determinant of each square matrix of x.

    0 for a singular matrix, NaN for one holding NaN (or whose infinities
    cancel); one too large for the dtype is infinite, with NumPy's signs.
    """
    return _gpukit._linalg_det(x)


def slogdet(x, /):
    """The sign and the natural log of the absolute value of each determinant.

    SlogdetResult(sign, logabsdet): sign is 1, -1 or 0 (a complex number of
    modulus 1 for complex x) in x's dtype, logabsdet real (-inf for a
    singular matrix); det = sign * exp(logabsdet) without overflowing.
    A matrix holding NaN gives NaN for both, as do infinities that cancel
    in its LU factors.
    """
    return SlogdetResult(*_gpukit._linalg_slogdet(x))


def cholesky(x, /, *, upper=False):
    """The Cholesky factor of each Hermitian positive-definite matrix of x.

    L lower triangular with x = L @ L^H, or with upper=True U upper
    triangular with x = U^H @ U. Only the lower (upper) triangle of x is
    read. A matrix that is not positive definite raises LinAlgError.
    """
    return _gpukit._linalg_cholesky(x, upper)


def eigh(x, /):
    """The eigenvalues and eigenvectors of each Hermitian (real symmetric) matrix of x.

    EighResult(eigenvalues, eigenvectors): the eigenvalues ascending, real
    (float32 for complex64); the eigenvectors orthonormal, as the columns,
    in x's dtype. Only the lower triangle of x is read (NumPy's default).
    """
    return EighResult(*_gpukit._linalg_eigh(x))


def eigvalsh(x, /):
    """The eigenvalues of each Hermitian (real symmetric) matrix of x, ascending (eigh's)."""
    return _gpukit._linalg_eigvalsh(x)


def eig(x, /):
    """The eigenvalues and right eigenvectors of each general square matrix of x.

    EigResult(eigenvalues, eigenvectors), both complex whatever x is
    (complex64 for float32 and complex64 x, else complex128; NumPy gives a
    real result when every eigenvalue is real, CuPy and PyTorch complex, as
    here): x @ v[:, i] = w[i] * v[:, i], each column of unit length. The
    order is LAPACK's. A matrix with NaN or infinity raises LinAlgError.
    """
    return EigResult(*_gpukit._linalg_eig(x))


def eigvals(x, /):
    """The eigenvalues of each general square matrix of x, complex (eig's)."""
    return _gpukit._linalg_eigvals(x)


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

    ord: 'fro' (Frobenius; None means it too, as in the standard and NumPy),
    'nuc' (the sum of the singular values), 1 / -1 (the largest / smallest
    column sum of abs(x)), inf / -inf (row sums), 2 / -2 (the largest /
    smallest singular value). The singular-value norms are computed by
    LAPACK on the host.
    """
    return _gpukit._linalg_matrix_norm(x, keepdims, ord)


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
    matrix then raises LinAlgError).
    """
    return _gpukit._linalg_matrix_power(x, n)
