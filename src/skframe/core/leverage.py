"""Ridge leverage scores from a Nyström factor: the one leverage-score routine of skframe.

The ridge leverage scores of n points with kernel matrix K are
``l_i(lam) = [K (K + n lam I)^{-1}]_ii``; their sum is the effective dimension
``d_eff(lam)``, the number of directions a sketch must keep (Alaoui and Mahoney, "Fast
Randomized Kernel Ridge Regression with Statistical Guarantees", NeurIPS 2015). Exact
scores cost O(n^3); here ``K ~ F F^T`` with the Nyström factor ``F = K[:, J] K[J, J]^{-1/2}``
of q uniformly sampled columns J, and

    l_i ~ F_i (F^T F + n lam I)^{-1} F_i^T + (K_ii - ||F_i||^2) / (n lam),

the second term counting the part of ``k(x_i, .)`` the factor misses. The leverage-score
sketch samples with probabilities proportional to them; sketch-size selection
(:mod:`skframe.model_selection.curves`) reads their sum and their sorted curve.
"""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import n_items, take
from skframe.contract.protocols import kernel_block, kernel_diag
from skframe.exceptions import InvalidParameterError
from skframe.validation import check_seed

__all__ = ["nystrom_leverage_scores", "approximate_leverage_scores", "effective_dimension"]


def nystrom_leverage_scores(kernel, X, lam, n_columns, rng):
    """Approximate ridge leverage scores of the items of X from ``n_columns`` uniform Nyström columns.

    Parameters
    ----------
    kernel : kernel object
        Used as given: prepare it on X first (:func:`skframe.contract.protocols.kernel_prepare`).
    X : ndarray, sparse matrix or InputCollection of n items
    lam : float
        Ridge parameter, > 0.
    n_columns : int
        Columns of the factor (at most n).
    rng : numpy.random.Generator
        Draws the columns (``rng.choice(n, n_columns, replace=False)``).

    Returns
    -------
    ndarray of shape (n,)
        The scores, not clipped: ``>= 0`` up to rounding; a score may exceed 1 where the
        factor misses much of ``k(x_i, .)``.
    """
    n = n_items(X)
    q = int(min(n, n_columns))
    J = np.sort(rng.choice(n, size=q, replace=False))
    B = kernel_block(kernel, X, take(X, J))
    W = 0.5 * (B[J] + B[J].T)
    w, V = np.linalg.eigh(W)
    keep = w > max(w.max(), 0) * q * np.finfo(float).eps * 10
    F = B @ (V[:, keep] / np.sqrt(w[keep]))
    A = F.T @ F
    A[np.diag_indices_from(A)] += n * lam
    lev = np.einsum("ij,ij->i", F, np.linalg.solve(A, F.T).T)
    resid = np.clip(kernel_diag(kernel, X) - np.einsum("ij,ij->i", F, F), 0, None)
    return lev + resid / (n * lam)


def approximate_leverage_scores(kernel, Z, lam, *, n_samples=None, random_state=None):
    """Approximate ridge leverage scores of the rows of Z, in [0, 1].

    ``l_i ~ F_i (F^T F + n lam I)^{-1} F_i^T + (k(z_i, z_i) - ||F_i||^2) / (n lam)`` with
    the Nyström factor ``F = K[:, J] K[J, J]^{-1/2}`` of ``n_samples`` uniform columns
    (:func:`nystrom_leverage_scores`).

    Parameters
    ----------
    kernel : kernel object
    Z : ndarray, sparse matrix or InputCollection of n items
    lam : float
    n_samples : int, optional
        Number of Nyström columns (default ``min(n, max(100, 2 sqrt(n)))``).
    random_state : int or Generator, optional

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from skframe.contract.registry import get_kernel
    >>> X = np.random.default_rng(0).normal(size=(300, 3))
    >>> scores = approximate_leverage_scores(get_kernel("gaussian", gamma=0.5), X, 1e-3, random_state=0)
    >>> scores.shape, bool(0 < effective_dimension(scores) < 300)
    ((300,), True)
    """
    if lam <= 0:
        raise InvalidParameterError(f"lam={lam!r} must be > 0")
    rng = np.random.default_rng(check_seed(random_state))
    n = n_items(Z)
    q = int(min(n, n_samples or max(100, int(2 * np.sqrt(n)))))
    return np.clip(nystrom_leverage_scores(kernel, Z, lam, q, rng), 0, 1)


def effective_dimension(scores):
    """``d_eff = sum_i l_i``: the degrees of freedom, a sketch-size estimate."""
    return float(np.sum(scores))
