"""The SISOKR algebra: the input side of sketched output kernel regression.

El Ahmad, Brogat-Motte, Laforgue and d'Alché-Buc, "Sketch In, Sketch Out:
Accelerating both Learning and Inference for Structured Prediction with Kernels"
(AISTATS 2024), Prop. 1: with an input sketch R_X (m_X x n) and an output sketch
R_Y (m_Y x n), the SISOKR estimator is
``h(x) = sum_i alpha_i(x) psi(y_i)`` with coefficients given by

    ``Omega~ = K~_Y^+ R_Y K_Y K_X R_X^T (R_X K_X^2 R_X^T + n lam K~_X)^+``,

``K~_X = R_X K_X R_X^T`` and ``K~_Y = R_Y K_Y R_Y^T``. skframe splits it into an
output basis (the left factor, :mod:`skframe.core.output_basis`) and the coefficients of
the input map on the sampled inputs (the right factor, :func:`sketched_input_coef`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from skframe.contract.collections import n_items, take
from skframe.contract.protocols import kernel_block
from skframe.core.feature_map import kernel_times
from skframe.core.linalg import pinv_sym, solve_psd
from skframe.core.sketching import diagonal_of_mix, sketched_gram_products
from skframe.options import ComputeOptions

__all__ = ["sisokr_omega", "sketched_input_coef", "input_products", "has_duplicate_rows"]


def sisokr_omega(KR_X, RKR_X, RKY, RKR_Y, lam, rtol=None):
    """``Omega~`` of Prop. 1 of "Sketch In, Sketch Out" (El Ahmad et al., AISTATS 2024), dense.

    ``Omega~ = K~_Y^+ R_Y K_Y K_X R_X^T (R_X K_X^2 R_X^T + n lam K~_X)^+``, from the
    sketched products; for checks and small problems (the estimator never forms it).

    Parameters
    ----------
    KR_X : ndarray (n, m_X)
        ``K_X R_X^T``.
    RKR_X : ndarray (m_X, m_X)
        ``K~_X = R_X K_X R_X^T``.
    RKY : ndarray (m_Y, n)
        ``R_Y K_Y``.
    RKR_Y : ndarray (m_Y, m_Y)
        ``K~_Y``.
    lam : float
    rtol : float, optional
        Relative tolerance of the pseudo-inverses.

    Returns
    -------
    ndarray of shape (m_Y, m_X)
    """
    n = KR_X.shape[0]
    A = KR_X.T @ KR_X + n * lam * RKR_X
    return pinv_sym(RKR_Y, rtol) @ (RKY @ KR_X) @ pinv_sym(A, rtol)


def sketched_input_coef(kernel, X, R, T, lam, *, rtol=None, engine=None, prepared=False, sample_weight=None):
    """Coefficients on the sampled inputs of the input-sketched ridge map to targets ``T``.

    ``coef = S_mix^T (R K^2 R^T + n lam K~)^+ R K T``, the right-hand factor of
    ``Omega~`` in Prop. 1 of "Sketch In, Sketch Out" (El Ahmad et al., AISTATS 2024),
    so that the prediction is ``k(x, X[R.indices]) @ coef``. It equals the
    feature-map form ``z(x)^T (Z^T Z + n lam I)^{-1} Z^T T`` (El Ahmad et al.,
    "Fast Kernel Methods for Generic Lipschitz Losses via p-Sparsified Sketches",
    TMLR 2023, Prop. 1) without its m x m eigendecomposition: the m x m system is
    formed by one BLAS ``syrk`` and solved by :func:`skframe.core.linalg.solve_psd`.

    Parameters
    ----------
    kernel : kernel object
    X : ndarray, sparse matrix or InputCollection with n items
    R : SketchMatrix (m x n)
    T : ndarray of shape (n, q)
    lam : float
    rtol : float, optional
    engine : {"numpy", "numba", "cupy"}, optional
        The engine of the kernel's inner loops (the fit's execution plan); by default the kernel
        chooses from the size of the block.
    prepared : bool, default=False
        The kernel is bound to ``X`` already (a fit binds it once).
    sample_weight : ndarray of shape (n,), optional
        Positive row weights of mean 1: the weighted normal equations
        ``(R K W K R^T + n lam K~) beta = R K W T`` (the data term ``(1/n) sum_i w_i ||g(x_i) - T_i||^2``).

    Returns
    -------
    ndarray of shape (s', q), C-contiguous
    """
    n = n_items(X)
    KR, G, mix_T = input_products(kernel, X, R, engine, prepared=prepared)
    KR0 = KR  # the rows of K R^T at the sampled inputs give R K R^T again
    if sample_weight is not None:  # sqrt(W) K R^T and sqrt(W) T: the weighted system in the same two products
        root = np.sqrt(sample_weight)[:, None]
        KR, T = root * KR, root * T
    B = KR.T @ T

    def full_M():  # the full symmetric M, rebuilt only for the pseudo-inverse fallback
        S = KR0[R.indices] if mix_T is None else np.asarray(R.mix @ KR0[R.indices])
        M = KR.T @ KR
        M += (0.5 * n * lam) * (S + S.T)
        return M

    # upper triangle of M = KR^T KR + n lam G in one syrk: KR.T is a Fortran-ordered view
    # (no copy) and G.T (Fortran-ordered, the same matrix as G up to rounding) takes the result
    M = sla.blas.dsyrk(1.0, KR.T, beta=n * lam, c=G.T, trans=0, lower=0, overwrite_c=1)
    # duplicated sampled inputs make M exactly singular: skip the doomed plain Cholesky
    singular = has_duplicate_rows(take(X, R.indices))
    W = solve_psd(M, B, rtol, jitter=True, singular=singular, rebuild=full_M)
    return np.ascontiguousarray(W if mix_T is None else np.asarray(mix_T @ W))


def input_products(kernel, X, R, engine=None, *, prepared=False):
    """``(KR, G, mix_T)``: the products of the input-sketched system, ``K R^T`` (n x m) and ``R K R^T``.

    For a sub-sampling sketch (``S_mix = D`` diagonal) ``D (D K^T K D + n lam D K_mm D)^+ D K^T T
    = (K^T K + n lam K_mm)^+ K^T T`` with ``K = k(X, X_sub)``: D cancels, and the products are
    ``k(X, X_sub)`` and its rows ``K_mm``, with ``mix_T`` None. Otherwise ``mix_T = S_mix^T`` maps the
    coefficients back to the sampled inputs.
    """
    if diagonal_of_mix(R.mix) is not None:
        KR = kernel_block(kernel, X, take(X, R.indices), engine=engine)
        return KR, KR[R.indices], None  # K_mm: the sampled rows
    KR, G = sketched_gram_products(kernel, X, R, options=ComputeOptions(engine=engine) if engine else None,
                                   prepared=prepared)
    return KR, G, R.mix.T


def has_duplicate_rows(A):
    """True when two rows of A (dense or CSR) are identical (two random projections agree).

    Always False for an :class:`~skframe.contract.collections.InputCollection` (no row arithmetic):
    the solver then finds out by a failed factorisation.
    """
    if n_items(A) < 2 or not hasattr(A, "__matmul__") or getattr(A, "ndim", 0) != 2:
        return False
    r = np.random.default_rng(12345).standard_normal((A.shape[1], 2))
    P = np.asarray(A @ r)
    _, counts = np.unique(P, axis=0, return_counts=True)
    return bool((counts > 1).any())


class _Draw:
    """One ensemble member: an input map to coordinates and its output basis."""

    __module__ = "skframe.models.structured"  # the name saved model files know it by

    def __init__(self, X_fit, coef, basis, input_info, fmap=None):
        self.X_fit = X_fit
        self.coef = coef
        self.basis = basis
        self.input_info = input_info
        self.fmap = fmap

    def predict(self, kernel, X, options=None):
        """``g(X)``: the input map's coordinates (``options``: the prediction's plan)."""
        if self.fmap is not None:
            return self.fmap.transform(X) @ self.coef
        return kernel_times(kernel, X, self.X_fit, self.coef, options=options)
