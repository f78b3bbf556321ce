"""Dense linear algebra with explicit rank tolerance.

Sketched Gram matrices such as ``R K R^T`` are often numerically singular, so
skframe never inverts them directly: it uses symmetric eigendecompositions with
a relative tolerance (eigenvalues below ``rtol * max_eigenvalue`` are treated
as zero) and Cholesky factorisations with an eigendecomposition fallback.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.linalg import lapack

from skframe.exceptions import InvalidParameterError

__all__ = ["default_rtol", "eigh_truncated", "pinv_sym", "solve_psd", "sqrt_pinv_sym", "sketch_spectrum",
           "spectral_projection", "weighted_gram", "weighted_outer", "gather_rows", "ZERO_GRAM"]

#: start of the error message of a zero sketched Gram matrix (the fit names the kernel's parameters)
ZERO_GRAM = "the sketched Gram matrix R K R^T is zero"


def default_rtol(size):
    """Default relative eigenvalue tolerance for a symmetric matrix of the given size."""
    return max(int(size), 1) * np.finfo(np.float64).eps * 10.0


def eigh_truncated(A, rtol=None):
    """Eigenpairs of a symmetric PSD matrix above a relative tolerance, in descending order.

    Parameters
    ----------
    A : ndarray of shape (m, m)
        Symmetric matrix (only symmetrised, not checked).
    rtol : float, optional
        Eigenvalues ``<= rtol * max(eigenvalues)`` are dropped. Defaults to
        :func:`default_rtol`.

    Returns
    -------
    w : ndarray of shape (r,)
        Kept eigenvalues, descending.
    V : ndarray of shape (m, r)
        Corresponding orthonormal eigenvectors.
    """
    A = np.asarray(A, dtype=np.float64)
    A = 0.5 * (A + A.T)
    if rtol is None:
        rtol = default_rtol(A.shape[0])
    w, V = sla.eigh(A, overwrite_a=True, check_finite=False, driver="evd")
    w = w[::-1]
    V = V[:, ::-1]
    top = w[0] if w.size else 0.0
    if top <= 0:
        return w[:0], V[:, :0]
    keep = w > rtol * top
    return w[keep].copy(), np.ascontiguousarray(V[:, keep])


def sketch_spectrum(RKR, rtol=None, *, xp=None):
    """The eigenpairs of a sketched Gram matrix ``R K R^T`` kept for the feature map, in descending order.

    The one truncation step of the in-memory, streamed, GPU and Dask fits: eigenvalues
    ``<= rtol * max`` are dropped (:func:`eigh_truncated`), and a matrix with none left is
    refused.

    Parameters
    ----------
    RKR : ndarray of shape (m, m)
        Symmetric PSD matrix (NumPy; or an array of ``xp``).
    rtol : float, optional
        Relative eigenvalue tolerance (default :func:`default_rtol` of m).
    xp : module, optional
        Array namespace of a device (CuPy): the decomposition runs there and ``w, U`` are
        arrays of ``xp``. Default NumPy (LAPACK through SciPy).

    Returns
    -------
    w : ndarray of shape (r,)
        Kept eigenvalues, descending, ``r >= 1``.
    U : ndarray of shape (m, r)

    Raises
    ------
    InvalidParameterError
        When no eigenvalue is kept: ``R K R^T`` is zero.
    """
    rtol = default_rtol(RKR.shape[0]) if rtol is None else rtol
    if xp is None or xp is np:
        w, U = eigh_truncated(RKR, rtol)
    else:
        w, U = xp.linalg.eigh(xp.asarray(RKR))
        w, U = w[::-1], U[:, ::-1]
        keep = w > rtol * max(float(w[0]), 0.0) if w.size else w > 0
        w, U = w[keep], U[:, keep]
    if w.size == 0:
        raise InvalidParameterError(
            f"{ZERO_GRAM}: the kernel vanishes on the sampled points; check the kernel's parameters and the data's "
            "scale"
        )
    return w, U


def spectral_projection(RKR, rtol=None, *, xp=None):
    """``U_r D_r^{-1/2}`` of ``R K R^T = U D U^T`` and the kept eigenvalues (see :func:`sketch_spectrum`).

    The sketched features are ``z(x) = k(x, X) R^T U_r D_r^{-1/2}`` (El Ahmad, Laforgue and
    d'Alché-Buc, "Fast Kernel Methods for Generic Lipschitz Losses via p-Sparsified Sketches",
    TMLR 2023, Prop. 1).

    Returns
    -------
    UD : ndarray of shape (m, r)
    w : ndarray of shape (r,)

    >>> UD, w = spectral_projection(np.diag([4.0, 1.0, 0.0]))
    >>> w.tolist(), np.round(UD.T @ np.diag([4.0, 1.0, 0.0]) @ UD, 12).tolist()
    ([4.0, 1.0], [[1.0, 0.0], [0.0, 1.0]])
    """
    w, U = sketch_spectrum(RKR, rtol, xp=xp)
    return U / (np if xp is None else xp).sqrt(w), w


def pinv_sym(A, rtol=None):
    """Pseudo-inverse of a symmetric PSD matrix through :func:`eigh_truncated`."""
    w, V = eigh_truncated(A, rtol)
    return (V / w) @ V.T


def sqrt_pinv_sym(A, rtol=None):
    """``V_r D_r^{-1/2}`` so that ``(V_r D_r^{-1/2}) (V_r D_r^{-1/2})^T = A^+``."""
    w, V = eigh_truncated(A, rtol)
    return V / np.sqrt(w), w


def _cholesky_solve(A, B, overwrite_a):
    """``A^{-1} B`` from the upper triangle of A (LAPACK potrf/potrs), or None when A is not positive definite."""
    c, info = lapack.dpotrf(A, lower=0, clean=0, overwrite_a=overwrite_a)
    if info != 0:
        return None
    x, info = lapack.dpotrs(c, B, lower=0)
    return x if info == 0 else None


def solve_psd(A, B, rtol=None, *, jitter=False, singular=False, rebuild=None, overwrite_a=False):
    """Solve ``A X = B`` (minimum-norm when singular) for a symmetric positive semi-definite ``A``.

    The Cholesky attempts read only the upper triangle of ``A``. The steps are:

    1. Cholesky of ``A`` (skipped when ``singular`` says it is known to fail);
    2. with ``jitter``: Cholesky of ``A + delta I``, ``delta = rtol * max(diag A)``,
       the ridge being added to the diagonal of ``A`` in place (no m x m temporaries);
    3. the truncated-eigendecomposition pseudo-inverse :func:`pinv_sym` of the full
       matrix, obtained from ``rebuild()`` when given (e.g. when ``A`` holds only its
       upper triangle or was overwritten), else from ``A`` itself.

    Step 2 is meant for sketched systems such as ``R K^2 R^T + n lam R K R^T``
    whose exactly-null directions carry no prediction
    (``k(x, .)^T R^T v = 0`` when ``v^T R K R^T v = 0``): the tiny ridge then only
    replaces the truncation of those directions, at the price of one factorisation.

    Parameters
    ----------
    A : ndarray of shape (m, m)
        Modified only with ``jitter`` (its diagonal) or ``overwrite_a``.
    B : ndarray of shape (m, q) or (m,)
    rtol : float, optional
        Relative tolerance of the jitter and of the pseudo-inverse (default
        :func:`default_rtol`).
    jitter, singular : bool, default False
    rebuild : callable, optional
        Returns the full symmetric matrix for step 3; with it the jittered
        factorisation may overwrite ``A``.
    overwrite_a : bool, default False
        Let the first factorisation overwrite ``A``.

    Returns
    -------
    ndarray shaped like B
    """
    A = np.asarray(A, dtype=np.float64)
    if not singular:
        x = _cholesky_solve(A, B, overwrite_a=overwrite_a and not jitter and rebuild is not None)
        if x is not None:
            return x
    if jitter:
        tol = default_rtol(A.shape[0]) if rtol is None else rtol
        diag = np.einsum("ii->i", A)  # a view: the ridge is added in place
        delta = tol * max(float(diag.max()), np.finfo(float).tiny)
        diag += delta
        x = _cholesky_solve(A, B, overwrite_a=rebuild is not None)
        if x is not None:
            return x
        if rebuild is None:
            diag -= delta
    full = rebuild() if rebuild is not None else A
    return pinv_sym(full, rtol) @ B


#: bytes of the row block :func:`weighted_outer` scales at a time (it stays in cache), and its fewest rows
OUTER_BLOCK_BYTES, OUTER_MIN_ROWS = 1 << 22, 1024


def gather_rows(A, rows, out):
    """``out[...] = A[rows]`` (rows of A, in out's dtype), with no temporary where the dtypes agree (``np.take``
    into ``out``, which refuses to convert).

    >>> gather_rows(np.arange(6.0).reshape(3, 2), [2, 0], np.empty((2, 2), np.float32)).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    if A.dtype == out.dtype:
        return np.take(A, rows, axis=0, out=out)
    out[...] = A[rows]
    return out


def weighted_outer(Z, c, rows=None):
    """``Z^T diag(c) Z`` (r x r, symmetric) for the rows of ``Z`` (b x r) weighted by ``c`` (b,); with ``rows``
    (indices into Z and c) for those rows only.

    With ``c >= 0`` (a convex loss's curvature, sample weights) it sums ``W^T W`` over row blocks of
    ``W = sqrt(c) Z``, each scaled into one reused buffer of about :data:`OUTER_BLOCK_BYTES` (no copy of Z; the
    chosen ``rows`` are gathered into that buffer): NumPy's product of a matrix with its own transpose is BLAS
    ``syrk``, half the multiply-adds of the general product, mirrored. It goes through NumPy's BLAS, not SciPy's:
    the two wheels each carry their own OpenBLAS and thread pool, and a SciPy ``dsyrk`` called between NumPy
    products (a Newton pass) ran at half speed against NumPy's threads still spinning (22 524 x 301 on two cores,
    NumPy loaded before skframe: 0.10-0.15 s, here 0.04-0.05 s; in the command line, which shortens OpenBLAS's
    spin before NumPy loads, a Newton pass 0.084 s -> 0.070 s). Otherwise (a negative or NaN weight) the
    general product.

    >>> Z = np.arange(6.0).reshape(3, 2)
    >>> c = np.array([1.0, 2.0, 0.5])
    >>> bool(np.allclose(weighted_outer(Z, c), Z.T @ (Z * c[:, None])))
    True
    >>> bool(np.allclose(weighted_outer(Z, c, rows=[0, 2]), weighted_outer(Z[[0, 2]], c[[0, 2]])))
    True
    """
    Z = np.asarray(Z)
    c = np.asarray(c, dtype=np.float64).reshape(-1)
    if rows is not None:
        rows = np.asarray(rows, dtype=np.intp).reshape(-1)
        c = c[rows]
    b, r = (Z.shape[0] if rows is None else rows.size), Z.shape[1]
    if b == 0 or r < 2 or not c.min() >= 0:  # (NaN weights: the general product)
        Z = np.asarray(Z if rows is None else Z[rows], dtype=np.float64)
        return Z.T @ (Z * c[:, None])
    step = min(b, max(OUTER_MIN_ROWS, OUTER_BLOCK_BYTES // (8 * r)))
    root, buf, out = np.sqrt(c), np.empty((step, r)), np.zeros((r, r))
    for start in range(0, b, step):
        stop = min(b, start + step)
        W = buf[:stop - start]
        if rows is None:
            np.multiply(Z[start:stop], root[start:stop, None], out=W)
        else:  # gathered into the buffer (in float64), then scaled in place
            gather_rows(Z, rows[start:stop], W)
            W *= root[start:stop, None]
        out += W.T @ W  # syrk: W.T is W's own buffer transposed
    return out


def weighted_gram(blocks, weights, r, d):
    """``(Z^T diag(w) Z, Z^T diag(w) Y)`` summed over row blocks ``(start, Z_b, Y_b)`` of r features and d
    targets, each block's rows weighted by ``weights[start:start + len(Z_b)]``: the weighted square-loss system
    from one pass, memory bounded by a block (:func:`weighted_outer` for the Gram part)."""
    A, B = np.zeros((r, r)), np.zeros((r, d))
    for start, Zb, Yb in blocks:
        Zb = np.asarray(Zb, dtype=np.float64)
        w = weights[start:start + Zb.shape[0]]
        A += weighted_outer(Zb, w)
        B += (Zb * w[:, None]).T @ np.asarray(Yb, dtype=np.float64).reshape(Zb.shape[0], -1)
    return A, B
