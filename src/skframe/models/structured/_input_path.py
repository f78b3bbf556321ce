"""The input side of an output kernel regressor factored once, solved for any λ (the λ paths of model selection).

* exact input (IOKR, ISOKR): ``K = U diag(e) U^T`` and ``(K + n lam I)^{-1} T = U diag(1 / (e + n lam)) U^T T``
  when the grid has at least :data:`EIGH_COST_IN_CHOLESKYS` values; a shorter grid solves each ``lam`` by the
  fresh fit's own Cholesky factorisation of ``K + n lam I`` (cheaper than one eigendecomposition of the n x n
  matrix; the Gram matrix is still computed once);
* input sketch (SIOKR, SISOKR): ``(K R^T)^T (K R^T) + n lam R K R^T`` is diagonalised in the sketched feature
  coordinates ``L = U_r D_r^{-1/2}`` of ``R K R^T = U D U^T`` (rank ``r``, the eigenvalues above the relative
  tolerance ``rtol``): ``L^T (K R^T)^T (K R^T) L = Q diag(s) Q^T`` and the coefficients are
  ``L Q diag(1 / (s + n lam)) Q^T L^T (K R^T)^T T`` (El Ahmad et al., "Fast Kernel Methods for Generic Lipschitz
  Losses via p-Sparsified Sketches", TMLR 2023, Prop. 1: the ridge on the features
  ``z(x) = D_r^{-1/2} U_r^T R k_x``); random Fourier features: ``Z^T Z = Q diag(s) Q^T``.

With row weights ``w`` (mean 1) the systems are the weighted ones of the fresh fit: ``W^{1/2} K W^{1/2}`` and
``W^{1/2} T`` on the exact side (the coefficients ``W^{1/2}`` times the solution), ``W^{1/2} K R^T`` and
``W^{1/2} Z`` on the sketched and feature-map sides.

These are the solutions of the fresh fit's systems in exact arithmetic, so a path's predictions agree with a
fresh fit's to rounding (about 1e-8 relative; the fresh fit factors each ``lam``'s system by Cholesky).
"""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import take
from skframe.contract.protocols import kernel_block
from skframe.core.linalg import default_rtol, solve_psd, sqrt_pinv_sym
from skframe.models.structured._sisokr import _Draw, input_products

__all__ = ["EIGH_COST_IN_CHOLESKYS", "InputPaths", "exact_input_path", "feature_map_path", "sketched_path"]

#: a symmetric eigendecomposition with vectors costs about this many Cholesky factorisations of the
#: same matrix (LAPACK's divide and conquer: about 9 m^3 flops against m^3 / 3)
EIGH_COST_IN_CHOLESKYS = 25


class _EigenPath:
    """One draw's input map ``coef(lam) = P diag(1 / (s + n lam)) c`` (optionally ``mix^T`` on the left)."""

    def __init__(self, P, s, c, n, *, mix_T=None):
        self.P, self.s, self.c, self.n, self.mix_T = P, s, c, n, mix_T
        self.member = None  # (X_fit, basis, input_info, fmap) of the draw

    def coef(self, lam):
        d = self.s + self.n * float(lam)
        keep = d > default_rtol(d.size) * max(float(d.max()), np.finfo(float).tiny)
        inv = np.where(keep, 1.0 / np.where(keep, d, 1.0), 0.0)  # the pseudo-inverse of a singular system
        W = self.P @ (inv[:, None] * self.c)
        if self.mix_T is not None:
            W = np.asarray(self.mix_T @ W)
        return np.ascontiguousarray(W)

    def draws(self, lam):
        X_fit, basis, info, fmap = self.member
        return [_Draw(X_fit, self.coef(lam), basis, info, fmap=fmap)]

    @property
    def rank(self):
        return int(self.s.size)


class _FactorPath:
    """The exact input map ``(K + n lam I)^{-1} B`` solved per ``lam`` as a fresh fit solves it (Cholesky of
    ``K + n lam I`` by :func:`skframe.core.linalg.solve_psd`), from the Gram matrix computed once."""

    def __init__(self, K, B, n):
        self.K, self.B, self.n = K, B, n

    def coef(self, lam):
        shift = self.n * float(lam)

        def rebuild():  # the full matrix again, for the pseudo-inverse fallback
            G = self.K.copy()
            G[np.diag_indices_from(G)] += shift
            return G

        return np.ascontiguousarray(solve_psd(rebuild(), self.B, overwrite_a=True, rebuild=rebuild))

    @property
    def rank(self):
        return int(self.K.shape[0])


def _eigen_path(A, B, n, **kw):
    """The path of ``(A + n lam I)^{-1} B`` for a symmetric PSD ``A``."""
    s, Q = np.linalg.eigh(A)
    return _EigenPath(Q, s, Q.T @ B, n, **kw)


class _SplitPath:
    """The exact input map of every member at once, split into the members' draws (``root``: the rows' square-root
    weights that scale the coefficients, None for equal weights)."""

    def __init__(self, path, cuts, members, root=None):
        self.path, self.cuts, self.members, self.root = path, cuts, members, root

    def draws(self, lam):
        coef = self.path.coef(lam)
        if self.root is not None:
            coef = self.root * coef
        return [_Draw(X, np.ascontiguousarray(w), basis, dict(info))
                for w, (X, basis, info) in zip(np.split(coef, self.cuts, axis=1), self.members)]

    @property
    def rank(self):
        return self.path.rank


class InputPaths:
    """The input maps of every member of a fit, for any λ: ``draws(lam)`` and the smallest ``rank``."""

    def __init__(self, paths):
        self.paths = paths

    def draws(self, lam):
        """The members' draws at ``lam`` (what ``OutputKernelRegressor.draws_`` holds)."""
        return [draw for path in self.paths for draw in path.draws(lam)]

    @property
    def rank(self):
        return min(p.rank for p in self.paths)


def _root(sample_weight):
    return None if sample_weight is None else np.sqrt(sample_weight)[:, None]


def exact_input_path(kx, X, members, n, n_lams, sample_weight=None):
    """The exact input side (IOKR, ISOKR) for the targets of every member, the Gram matrix computed once."""
    K = kernel_block(kx, X, X)
    B = members[0].T if len(members) == 1 else np.hstack([m.T for m in members])
    root = _root(sample_weight)
    if root is not None:  # W^{1/2} K W^{1/2} and W^{1/2} B
        K *= root
        K *= root.T
        B = root * B
    if n_lams >= EIGH_COST_IN_CHOLESKYS:
        path = _eigen_path(0.5 * (K + K.T), B, n)
        del K
    else:  # fewer factorisations than one eigendecomposition costs: solve each lam as the fresh fit does
        path = _FactorPath(K, B, n)
    cuts = np.cumsum([m.T.shape[1] for m in members])[:-1]
    info = {"name": "none", "m": n, "n": n, "s_prime": n}
    return _SplitPath(path, cuts, [(X, m.basis, dict(info)) for m in members], root=root)


def feature_map_path(rep, T, basis, n, sample_weight=None):
    """One member's input side on explicit features (random Fourier features): the ridge on ``Z``."""
    root = _root(sample_weight)
    Z = rep.Z if root is None else root * rep.Z
    T = T if root is None else root * T
    path = _eigen_path(Z.T @ Z, Z.T @ T, n)
    path.member = (None, basis, rep.info, rep.feature_map)
    return path


def sketched_path(kx, X, member, n, settings, sample_weight=None):
    """One member's input-sketched side from its sketch ``member.R_X``; ``settings = (rtol, engine)``."""
    rtol, engine = settings
    R = member.R_X
    KR, G, mix_T = input_products(kx, X, R, engine, prepared=True)  # kx: the fit's kernel, bound to X
    KR = np.asarray(KR, dtype=np.float64)
    root, T = _root(sample_weight), member.T
    if root is not None:
        KR, T = root * KR, root * T
    L, _ = sqrt_pinv_sym(0.5 * (G + G.T), rtol)  # feature coordinates of R K R^T: L^T G L = I_r
    KRL = KR @ L  # the sketched features Z of the training rows
    s, Q = np.linalg.eigh(KRL.T @ KRL)
    P = L @ Q
    path = _EigenPath(P, s, P.T @ (KR.T @ T), n, mix_T=mix_T)
    X_sub = take(X, R.indices)
    path.member = (np.ascontiguousarray(X_sub) if isinstance(X_sub, np.ndarray) else X_sub, member.basis,
                   R.summary(), None)
    return path
