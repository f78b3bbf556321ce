"""CV+ fold models of sketched kernel ridge regression from one sketch and per-fold sums.

For the square loss a fold's model depends on its training rows only through small sums, as in the
λ-path search (:mod:`skframe.model_selection._square_path`, ``sketch_sharing="shared"``). One model is
fitted on all rows; its sketched feature map ``z(x) = k(x, X_fit_) P_z`` (r columns, ``P_z = S_mix^T UD``
from the fitted ``posterior_``) is shared by the folds. One pass over the training rows in chunks accumulates,
per fold k, ``A_k = Z_k^T Z_k``, ``b_k = Z_k^T Y_k``, ``s_k = Z_k^T 1`` and the target sums; fold k's model
is then the sketched ridge estimator of the other folds' rows on the shared sketch,

    W_{-k} = (A - A_k + n_{-k} lam I)^{-1} ((b - b_k) - (s - s_k) ybar_{-k}^T),

with ``ybar_{-k}`` the other folds' target mean (zero without an intercept). The held-out residuals need the
fold models, known after the pass: the features of the pass are kept (float32) for as many rows as
``budget_bytes`` holds, and only the other rows' are recomputed in a second pass. Test rows need one
kernel block per chunk for all K models together (``k(x, X_fit_) [P_z W_{-1} ... P_z W_{-K}]``).

Cost: one fit, one (or two) passes over the training rows, K solves of r x r systems, and a prediction
pass over the test rows. A pass computes the features as the fit does, ``(k(X_rows, X_sub) S_mix^T) UD``:
the block engine's chunk product with the sketch's sparse mixing matrix (m columns), then the m x r map
``UD`` (both kept in the fitted ``posterior_``), so a pass costs about what the fit's own pass over the rows
costs. Multiplying the kernel block by the dense ``P_z = S_mix^T UD`` (s' x r) instead would cost s'/m times
more in products: for a p-sparsified sketch with s' much larger than m that is several fits.
The landmarks of the shared sketch may be held-out inputs (never held-out targets):
the finite-sample guarantee of CV+ assumes fold models that do not see the held-out fold at all, so with a
shared sketch it is an approximation (the one the λ-path search makes for its scores).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from skframe.contract.collections import n_items, take
from skframe.core.feature_map import kernel_times, mixed_features
from skframe.core.linalg import solve_psd
from skframe.exceptions import InvalidParameterError

__all__ = ["SharedSketchFolds", "fit_shared_folds"]


class SharedSketchFolds:
    """The K fold models on one shared sketch: ``predict_all(X) -> (K, n, d)``."""

    def __init__(self, kernel, X_fit, coefs, offsets, chunk_rows):
        self.kernel, self.X_fit = kernel, X_fit
        self.coefs = coefs  # (s', K d)
        self.offsets = offsets  # (K, d)
        self.chunk_rows = int(chunk_rows)

    def predict_all(self, X):
        K, d = self.offsets.shape
        F = np.asarray(kernel_times(self.kernel, X, self.X_fit, self.coefs), dtype=np.float64)
        return F.reshape(F.shape[0], K, d).transpose(1, 0, 2) + self.offsets[:, None, :]


def _check(estimator):
    if type(estimator).__name__ != "SketchedKernelRidge":
        raise InvalidParameterError(
            f"sketch_sharing='shared' needs a SketchedKernelRidge (the square loss), not {type(estimator).__name__}; "
            "use sketch_sharing='fold'")


def _feature_map(kernel, X_fit, state, n_rows):
    """``X_rows -> z(X_rows)`` (float64), computed as the fit computes its features when the state keeps the
    factors ``S_mix`` and ``UD`` (:func:`skframe.core.feature_map.mixed_features`); without them (a model file
    of an older layout, which keeps the dense map), ``k(X_rows, X_fit) P_z``."""
    mix, UD = state.get("mix"), state.get("UD")
    if mix is None or UD is None:
        P_z = state["P_z"]
        return lambda X_rows: np.asarray(kernel_times(kernel, X_rows, X_fit, P_z), dtype=np.float64)
    return mixed_features(kernel, X_fit, mix, UD, n_rows)


def _expansion_map(state):
    """``P_z = S_mix^T UD`` (s' x r) as the fit formed it (``coef_ = P_z W``), or the stored dense map."""
    if state.get("P_z") is not None:
        return state["P_z"]
    return np.asarray(state["mix"].T @ np.asarray(state["UD"], dtype=np.float64))


def fit_shared_folds(estimator, X, Y2, fold_of, K, *, chunk_rows=4096, budget_bytes=192 * 2**20):
    """``(full_model, folds, residuals)``: the model on all rows, the :class:`SharedSketchFolds` and the
    held-out absolute residuals (n, d)."""
    _check(estimator)
    full = clone(estimator).fit(X, Y2)
    state = getattr(full, "posterior_", None)
    if state is None or (state.get("P_z") is None and (state.get("mix") is None or state.get("UD") is None)):
        raise InvalidParameterError(
            f"sketch_sharing='shared' needs a sketched model with a kernel expansion (sketch={estimator.sketch!r} "
            "is exact or an explicit feature map); use sketch_sharing='fold'")
    kernel, X_fit = full.kernel_, full.X_fit_
    lam = float(full.lam_path_[-1])
    n, d = Y2.shape
    r = (state["P_z"] if state.get("P_z") is not None else state["UD"]).shape[1]
    A = np.zeros((K, r, r))
    b = np.zeros((K, r, d))
    s = np.zeros((K, r))
    ysum = np.zeros((K, d))
    counts = np.bincount(fold_of, minlength=K)
    features = _feature_map(kernel, X_fit, state, n)
    keep = int(min(n, budget_bytes // (r * 4)))  # the first `keep` rows' features are kept (float32)
    Z_all = np.empty((keep, r), dtype=np.float32)
    step = max(1, int(chunk_rows))
    for start in range(0, n, step):
        rows = np.arange(start, min(n, start + step))
        Z = features(take(X, rows))
        if start < keep:
            Z_all[start:min(keep, start + step)] = Z[:keep - start]
        f = fold_of[rows]
        for k in np.unique(f):
            sel = f == k
            Zk = Z[sel]
            A[k] += Zk.T @ Zk
            b[k] += Zk.T @ Y2[rows[sel]]
            s[k] += Zk.sum(axis=0)
            ysum[k] += Y2[rows[sel]].sum(axis=0)
    A_t, b_t, s_t, y_t = A.sum(0), b.sum(0), s.sum(0), ysum.sum(0)
    W = np.empty((K, r, d))
    offsets = np.zeros((K, d))
    for k in range(K):
        n_t = n - counts[k]
        if full.fit_intercept:
            offsets[k] = (y_t - ysum[k]) / n_t
        M = A_t - A[k]
        M[np.diag_indices(r)] += n_t * lam
        W[k] = solve_psd(M, (b_t - b[k]) - np.outer(s_t - s[k], offsets[k]))
    R = np.empty((n, d))
    for start in range(0, n, step):
        rows = np.arange(start, min(n, start + step))
        stop = min(n, start + step)
        if stop <= keep:
            Z = Z_all[start:stop].astype(np.float64)
        elif start >= keep:
            Z = features(take(X, rows))
        else:
            Z = np.vstack([Z_all[start:keep].astype(np.float64), features(take(X, np.arange(keep, stop)))])
        f = fold_of[rows]
        F = np.einsum("ir,ird->id", Z, W[f]) + offsets[f]
        R[rows] = np.abs(Y2[rows] - F)
    del Z_all
    P_z = _expansion_map(state)
    coefs = np.concatenate([P_z @ W[k] for k in range(K)], axis=1)  # (s', K d)
    folds = SharedSketchFolds(kernel, X_fit, coefs, offsets, chunk_rows)
    assert n_items(X) == n
    return full, folds, R
