"""Dense linear algebra with explicit rank tolerance.

Sketched Gram matrices such as ``R K R^T`` are often numerically singular, so
skframe never inverts them directly: it uses symmetric eigendecompositions with
a relative tolerance (eigenvalues below ``rtol * max_eigenvalue`` are treated
as zero) and Cholesky factorisations with an eigendecomposition fallback.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["default_rtol", "eigh_truncated", "pinv_sym", "solve_psd", "sqrt_pinv_sym"]


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


def pinv_sym(A, rtol=None):
    """Pseudo-inverse of a symmetric PSD matrix through :func:`eigh_truncated`."""
    w, V = eigh_truncated(A, rtol)
    return (V / w) @ V.T


def sqrt_pinv_sym(A, rtol=None):
    """``V_r D_r^{-1/2}`` so that ``(V_r D_r^{-1/2}) (V_r D_r^{-1/2})^T = A^+``."""
    w, V = eigh_truncated(A, rtol)
    return V / np.sqrt(w), w


def solve_psd(A, B, rtol=None):
    """Solve ``A X = B`` for symmetric positive (semi-)definite ``A``.

    Uses a Cholesky factorisation; when it fails (A singular or indefinite to
    working precision) falls back to the minimum-norm solution with a
    truncated eigendecomposition.
    """
    A = np.asarray(A, dtype=np.float64)
    try:
        c = sla.cho_factor(A, lower=False, check_finite=False)
        return sla.cho_solve(c, B, check_finite=False)
    except (np.linalg.LinAlgError, sla.LinAlgError):
        return pinv_sym(A, rtol) @ B
