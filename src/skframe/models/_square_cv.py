"""k-fold cross-validation of the square-loss ridge along a λ path, from sums of one fit's features.

``lam="auto"`` of the square loss scores each λ by the held-out mean squared error of k shuffled folds.
With the fit's features ``Z`` (n x r) and targets ``Y`` (centred by the fit), the rows are cut into k groups
(the folds' held-out parts) and one pass forms, per group g (row weights ``w``, 1 without sample weights)::

    A_g = Z_g^T W_g Z_g,   b_g = Z_g^T W_g Y_g,   z_g = Z_g^T w_g,   w_g = sum w,   y_g = Y_g^T w_g,
    q_g = sum_i w_i ||Y_i||^2   (per output)

Fold k trains on the other groups (their sums: the total minus group k), with its own intercept
``ybar = (Y^T w - y_k) / (sum w - w_k)``; with ``Z_t^T Z_t = Q diag(s) Q^T`` and ``c = Q^T Z_t^T (Y_t - ybar)`` its
weights are ``W(λ) = Q diag(1 / (s + n_t λ)) c`` for every λ (``n_t`` the fold's training weight), and its
held-out squared error ``q - 2 u^T h + u^T G u`` from ``G = Q^T A_k Q`` and ``h = Q^T (b_k - z_k ybar^T)``
(:class:`FoldSystem`, the eigen-system the cross-validated λ paths of :mod:`skframe.model_selection` use too).
The features are the fit's own (its sketch drawn once from all rows): each fold's model is the sketched ridge
of its rows on that shared sketch, as ``sketch_sharing="shared"`` of the search. The cost is one ``n r^2``
product (the fit forms the same one) and k eigendecompositions of r x r. The exact model uses the kernel
matrix: fold k's system is the eigendecomposition of ``K[train, train]``.

A fit that holds no features in memory (streamed sums, ``representation="accumulated"``) cross-validates on
:data:`CV_ROWS` evenly spaced rows whose features are recomputed on the fit's sketch (one pass over those rows);
a λ chosen on fewer rows errs toward more regularisation (see :func:`cv_features`).
"""

from __future__ import annotations

import numpy as np

from skframe.contract.collections import take
from skframe.core.feature_map import kernel_times
from skframe.core.linalg import default_rtol
from skframe.models._folds import default_folds, fold_options

__all__ = ["FoldSystem", "SQUARE_FOLDS", "CV_ROWS", "group_sums", "fold_systems", "exact_fold_systems",
           "cv_curve", "cv_features", "fit_fold_systems"]

#: folds of the square loss's λ="auto" (cheap: one n r^2 product and k eigendecompositions of r x r)
SQUARE_FOLDS = 5
#: rows cross-validated when the fit holds no features in memory (streamed sums)
CV_ROWS = 20000


class FoldSystem:
    """The eigen-system of one fold: everything the held-out scores of every ``lam`` need.

    Attributes
    ----------
    s : ndarray (r,)
        Eigenvalues of ``Z^T Z`` (or of K for the exact model).
    c : ndarray (r, d)
        ``Q^T Z^T Y_c``.
    n_train : int or float
        Training rows (their total weight with sample weights).
    offset : ndarray (d,)
        The intercept (training target mean, or zeros).
    G, h, q : ndarrays or None
        Held-out sums ``T^T T``, ``T^T Y_h'`` and ``||Y_h'||^2`` per output.
    T : ndarray (n_h, r) or None
        Held-out features in the eigenbasis, for scorers that need predictions.
    held_weight : float or None
        Held-out rows (their total weight), the denominator of the pooled error of :func:`cv_curve`.
    """

    def __init__(self, s, c, n_train, offset, *, G=None, h=None, q=None, T=None, held_weight=None):
        self.s, self.c, self.n_train, self.offset = s, c, n_train, offset
        self.G, self.h, self.q, self.T, self.held_weight = G, h, q, T, held_weight

    def weights(self, lam):
        """``u = c / (s + n lam)`` in the eigenbasis; directions where that system is not positive are dropped
        (the pseudo-inverse a failed factorisation falls back to)."""
        den = self.s + self.n_train * float(lam)
        keep = den > default_rtol(den.size) * max(float(den.max(initial=0.0)), 0.0)
        inv = np.zeros_like(den)
        inv[keep] = 1.0 / den[keep]
        return self.c * inv[:, None]

    def errors(self, lam):
        """Held-out sums of squared errors per output, from the sums."""
        u = self.weights(lam)
        sse = self.q - 2.0 * np.einsum("ij,ij->j", u, self.h) + np.einsum("ij,ij->j", u, self.G @ u)
        return np.maximum(sse, 0.0)

    def predictions(self, lam):
        """Held-out predictions ``T u + ybar`` (n_h, d)."""
        return self.T @ self.weights(lam) + self.offset


def _eigh(A):
    s, Q = np.linalg.eigh(0.5 * (A + A.T))
    return s, Q


def group_sums(Z, Y, groups, w=None):
    """The sums of each group of rows (see the module's definitions): a list of dicts ``A, b, z, w, y, q``."""
    Z, Y = np.asarray(Z, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    out = []
    for rows in groups:
        Zg, Yg = Z[rows], Y[rows]
        wg = np.ones(len(rows)) if w is None else np.asarray(w, dtype=np.float64)[rows]
        Zw = Zg * wg[:, None]
        out.append({"A": Zw.T @ Zg, "b": Zw.T @ Yg, "z": Zw.sum(axis=0), "w": float(wg.sum()),
                    "y": Yg.T @ wg, "q": (Yg * Yg * wg[:, None]).sum(axis=0)})
    return out


def fold_systems(sums, fit_intercept=True):
    """One :class:`FoldSystem` per group: trained on the other groups' sums, scored on the group's."""
    total = {key: sum(g[key] for g in sums) for key in sums[0]}
    systems = []
    for held in sums:
        tr = {key: total[key] - held[key] for key in total}
        offset = tr["y"] / tr["w"] if fit_intercept else np.zeros_like(tr["y"])
        s, Q = _eigh(tr["A"])
        system = FoldSystem(s, Q.T @ (tr["b"] - np.outer(tr["z"], offset)), tr["w"], offset)
        system.G = Q.T @ held["A"] @ Q
        system.h = Q.T @ (held["b"] - np.outer(held["z"], offset))
        system.q = held["q"] - 2.0 * offset * held["y"] + held["w"] * offset * offset
        system.held_weight = float(held["w"])
        systems.append(system)
    return systems


def exact_fold_systems(K, Y, folds, w=None, fit_intercept=True):
    """The fold systems of the exact model from its kernel matrix ``K`` (n x n) and the (train, test) folds
    (weights: the rows of ``K`` and ``Y`` scaled by ``sqrt(w)``, the intercept the weighted mean)."""
    Y = np.asarray(Y, dtype=np.float64)
    w = np.ones(Y.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    systems = []
    for train, test in folds:
        wt, wh = w[train], w[test]
        offset = (Y[train].T @ wt) / wt.sum() if fit_intercept else np.zeros(Y.shape[1])
        rt = np.sqrt(wt)
        s, Q = _eigh(K[np.ix_(train, train)] * np.outer(rt, rt))
        keep = s > default_rtol(s.size) * max(float(s.max(initial=0.0)), np.finfo(float).tiny)
        s, Q = s[keep], Q[:, keep]
        Yt = (Y[train] - offset) * rt[:, None]
        T = (K[np.ix_(test, train)] * rt[None, :]) @ Q / np.sqrt(s)  # held-out rows on the features Q sqrt(s)
        c = np.sqrt(s)[:, None] * (Q.T @ Yt)
        Yh = (Y[test] - offset) * np.sqrt(wh)[:, None]
        Th = T * np.sqrt(wh)[:, None]
        systems.append(FoldSystem(s, c, float(wt.sum()), offset, G=Th.T @ Th, h=Th.T @ Yh,
                                  q=(Yh * Yh).sum(axis=0), held_weight=float(wh.sum())))
    return systems


def cv_curve(systems, lams):
    """The held-out mean squared error (per unit of row weight and per output, pooled over the folds) at each
    λ of ``lams``."""
    lams = np.atleast_1d(np.asarray(lams, dtype=float))
    held = sum(sys.held_weight for sys in systems) * systems[0].c.shape[1]
    return np.array([sum(float(sys.errors(lam).sum()) for sys in systems) for lam in lams]) / held


def cv_features(rep, X, rows):
    """Features of ``rows`` of ``X`` on a streamed fit's sketch (``k(X_rows, X_basis) proj``), float64."""
    Z = kernel_times(rep.kernel, take(X, rows), rep.X_basis, rep.proj, options=rep.options)
    return np.asarray(Z, dtype=np.float64)


def fit_fold_systems(fit, n_splits=SQUARE_FOLDS):
    """``(systems, description)``: the fold systems of a square-loss :class:`~skframe.models._fit.Fit` on its own
    representation (features in memory, the exact model's K, or :data:`CV_ROWS` rows of a streamed fit), the
    folds :func:`skframe.models._folds.default_folds` of the estimator's seed; ``(None, why)`` where none can be
    formed (Dask targets)."""
    if hasattr(fit.Yc, "compute") or hasattr(fit.X, "compute"):
        return None, "Dask data"
    rep = fit.represent()
    n = fit.n
    w = None if fit.sample_weight is None else np.asarray(fit.sample_weight, dtype=np.float64)
    if w is not None:
        w = w * (n / w.sum())  # mean 1, as the weighted solve scales them
    opts = fold_options(fit.estimator)
    if rep.K is not None:
        folds, words = default_folds(n, n_splits, cv_order=opts["cv_order"], random_state=opts["random_state"])
        return exact_fold_systems(np.asarray(rep.K), fit.Yc, folds, w, fit.recipe.fit_intercept), words
    rows = None
    if rep.Z is not None:
        Z, Y = rep.Z, fit.Yc
    elif getattr(rep, "proj", None) is not None:  # streamed sums: a subsample's features on the fit's sketch
        rows = np.unique(np.linspace(0, n - 1, min(n, CV_ROWS)).astype(int))
        Z, Y = cv_features(rep, fit.X, rows), np.asarray(fit.Yc)[rows]
        w = None if w is None else w[rows]
    else:
        return None, "no features"
    folds, words = default_folds(Y.shape[0], n_splits, cv_order=opts["cv_order"], random_state=opts["random_state"])
    systems = fold_systems(group_sums(Z, Y, [test for _, test in folds], w), fit.recipe.fit_intercept)
    if rows is not None:
        words += f" of {rows.size} evenly spaced rows (the fit streamed its sums)"
    return systems, words
