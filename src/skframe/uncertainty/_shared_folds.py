"""CV+ fold models of sketched kernel ridge regression from one sketch and per-fold sums.

For the square loss a fold's model depends on its training rows only through small sums, as in the
λ-path search (:mod:`skframe.model_selection._square_path`, ``sketch_sharing="shared"``). One model is
fitted on all rows; its sketched feature map ``z(x) = k(x, X_fit_) P_z`` (r columns, ``P_z = S_mix^T UD``
from the fitted ``posterior_``) is shared by the folds. One pass over the training rows in chunks accumulates,
per fold k, ``A_k = Z_k^T Z_k``, ``b_k = Z_k^T Y_k``, ``s_k = Z_k^T 1`` and the target sums; fold k's model
is then the sketched ridge estimator of the other folds' rows on the shared sketch,

    W_{-k} = (A - A_k + n_{-k} lam I)^{-1} ((b - b_k) - (s - s_k) ybar_{-k}^T),

with ``ybar_{-k}`` the other folds' target mean (zero without an intercept). The held-out residuals need the
fold models, known after the pass: the features of the pass are kept (float32) for as many rows as the
memory budget leaves room for, and the other rows' fold predictions are computed in a second pass as test
rows' are, with one kernel block per chunk for all K models together
(``k(x, X_fit_) [P_z W_{-1} ... P_z W_{-K}]``, s' x K d weights formed as ``S_mix^T (UD [W_{-1} ... W_{-K}])``,
never the s' x r ``P_z``): the kernel block and K d products per entry, without the m x r map.

Memory: the passes run within the estimator's ``memory_budget`` (256 MiB where it has none), shared as
:func:`pass_plan` says: one kernel block (an eighth of the budget, at most the default block size), the
chunk's arrays (rows x (m + 2 r + K d) floats: ``K R^T``, the features, a fold's copy of its rows and the
fold predictions; another eighth), the fold sums (K r x r), and the kept float32 features in what remains.

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
from skframe.contract.model_tags import model_tags
from skframe.core.engine import planned
from skframe.core.feature_map import kernel_times, mixed_features
from skframe.core.linalg import solve_psd
from skframe.exceptions import InvalidParameterError
from skframe.options import DEFAULT_OPTIONS, parse_bytes

__all__ = ["SharedSketchFolds", "fit_shared_folds", "pass_plan", "DEFAULT_BUDGET"]

#: the passes' memory where the estimator has no ``memory_budget``
DEFAULT_BUDGET = 256 * 2**20

#: the smallest chunk of rows a pass takes (smaller ones make the products inefficient)
MIN_PASS_ROWS = 64


class SharedSketchFolds:
    """The K fold models on one shared sketch: ``predict_all(X) -> (K, n, d)``."""

    def __init__(self, kernel, X_fit, coefs, offsets, chunk_rows, block_bytes=None):
        self.kernel, self.X_fit = kernel, X_fit
        self.coefs = coefs  # (s', K d)
        self.offsets = offsets  # (K, d)
        self.chunk_rows = int(chunk_rows)
        self.block_bytes = block_bytes

    def _options(self):
        return _block_options(getattr(self, "block_bytes", None))  # None: pickled before the budgeted passes

    def predict_all(self, X):
        K, d = self.offsets.shape
        F = np.asarray(kernel_times(self.kernel, X, self.X_fit, self.coefs, options=self._options()),
                       dtype=np.float64)
        return F.reshape(F.shape[0], K, d).transpose(1, 0, 2) + self.offsets[:, None, :]

    def predict_own(self, X, fold_of, options=None):
        """``(len(X), d)``: each row's prediction by the model of its own fold ``fold_of`` (one kernel pass)."""
        K, d = self.offsets.shape
        F = np.asarray(kernel_times(self.kernel, X, self.X_fit, self.coefs, options=options or self._options()),
                       dtype=np.float64)
        return F.reshape(F.shape[0], K, d)[np.arange(F.shape[0]), fold_of] + self.offsets[fold_of]


def _block_options(block_bytes):
    """The compute options of kernel blocks of at most ``block_bytes`` (None or 0: the defaults, as None)."""
    return None if not block_bytes else DEFAULT_OPTIONS.replace(block_bytes=int(block_bytes))


def _check(estimator):
    if not model_tags(estimator).shared_fold_sketch:
        raise InvalidParameterError(
            f"sketch_sharing='shared' needs a SketchedKernelRidge (the square loss), not {type(estimator).__name__}; "
            "use sketch_sharing='fold'")


def _feature_map(kernel, X_fit, state, n_rows, block_bytes=None):
    """``X_rows -> z(X_rows)`` (float64), computed as the fit computes its features when the state keeps the
    factors ``S_mix`` and ``UD`` (:func:`skframe.core.feature_map.mixed_features`); without them (a model file
    of an older layout, which keeps the dense map), ``k(X_rows, X_fit) P_z``."""
    mix, UD = state.get("mix"), state.get("UD")
    if mix is None or UD is None:
        P_z = state["P_z"]
        options = _block_options(block_bytes)
        return lambda X_rows: np.asarray(kernel_times(kernel, X_rows, X_fit, P_z, options=options), dtype=np.float64)
    return mixed_features(kernel, X_fit, mix, UD, n_rows, block_bytes=block_bytes)


def _fold_weights(state, W):
    """``P_z [W_1 ... W_K]`` (s' x K d) for ``W`` (K, r, d): ``S_mix^T (UD [W_1 ... W_K])`` from the factors (the
    s' x r ``P_z`` is never formed), or the stored dense map times the weights."""
    K, r, d = W.shape
    W_cat = W.transpose(1, 0, 2).reshape(r, K * d)  # column k d + j: fold k, target j
    if state.get("P_z") is not None:
        return np.asarray(state["P_z"] @ W_cat)
    return np.asarray(state["mix"].T @ (np.asarray(state["UD"], dtype=np.float64) @ W_cat))


def pass_plan(budget, n, m, r, K, d, s_prime, chunk_rows):
    """``(rows, block_bytes, keep_bytes)``: how the passes share ``budget`` bytes.

    One kernel block (``block_bytes``: an eighth of the budget, at most ``ComputeOptions.block_bytes``), the
    chunk's float64 arrays (``rows`` x (m + 2 r + K d): ``K R^T``, the features, a fold's copy of its rows, the
    fold predictions of the second pass; at most another eighth and at most ``chunk_rows`` rows), the fold sums
    and one system (K r (r + d + 1) + r^2 floats) and the s' x K d fold weights; the float32 features of the
    first ``keep_bytes // (4 r)`` rows are kept in what remains.
    """
    budget = int(budget)
    block = int(max(1, min(DEFAULT_OPTIONS.block_bytes, budget // 8)))
    per_row = 8 * (m + 2 * r + K * d)
    rows = int(max(MIN_PASS_ROWS, min(int(chunk_rows), (budget // 8) // per_row)))
    rows = int(max(1, min(rows, n)))
    fixed = 8 * (K * r * (r + d + 1) + r * r + s_prime * K * d)
    keep = max(0, budget - block - rows * per_row - fixed)
    return rows, block, int(keep)


def fit_shared_folds(estimator, X, Y2, fold_of, K, *, chunk_rows=4096, budget_bytes=None):
    """``(full_model, folds, residuals)``: the model on all rows, the :class:`SharedSketchFolds` and the
    held-out absolute residuals (n, d).

    ``budget_bytes`` caps the kept float32 features (0 keeps none; None: what :func:`pass_plan` leaves of the
    estimator's ``memory_budget``, or of :data:`DEFAULT_BUDGET`); ``chunk_rows`` caps the rows of a chunk.
    """
    _check(estimator)
    full = clone(estimator).fit(X, Y2)
    state = getattr(full, "posterior_", None)
    if getattr(full, "representation_", None) == "centres":
        raise InvalidParameterError(
            f"sketch_sharing='shared' reuses the m x m sums of one fit, but this model (sketch_size="
            f"{estimator.sketch_size!r}) was solved by conjugate gradients over its centres, which form no such sums "
            "(its solver_info_ says so); use sketch_sharing='fold', or a sketch_size below the plan's threshold for "
            "conjugate gradients (skframe.compute.plan_square.PCG_MIN_CENTRES)")
    if state is None or (state.get("P_z") is None and (state.get("mix") is None or state.get("UD") is None)):
        raise InvalidParameterError(
            f"sketch_sharing='shared' needs a sketched model with a kernel expansion (sketch={estimator.sketch!r} "
            "is exact or an explicit feature map); use sketch_sharing='fold'")
    kernel, X_fit = full.kernel_, full.X_fit_
    lam = float(full.lam_path_[-1])
    n, d = Y2.shape
    r = (state["P_z"] if state.get("P_z") is not None else state["UD"]).shape[1]
    m = state["UD"].shape[0] if state.get("UD") is not None else r
    s_prime = n_items(X_fit)
    budget = parse_bytes(getattr(estimator, "memory_budget", None)) or DEFAULT_BUDGET
    step, block, keep_bytes = pass_plan(budget, n, m, r, K, d, s_prime, max(1, int(chunk_rows)))
    if budget_bytes is not None:
        keep_bytes = int(budget_bytes)
    A = np.zeros((K, r, r))
    b = np.zeros((K, r, d))
    s = np.zeros((K, r))
    ysum = np.zeros((K, d))
    counts = np.bincount(fold_of, minlength=K)
    features = _feature_map(kernel, X_fit, state, n, block)
    keep = int(min(n, keep_bytes // (r * 4)))  # the first `keep` rows' features are kept (float32)
    Z_all = np.empty((keep, r), dtype=np.float32)
    for start in range(0, n, step):
        stop = min(n, start + step)
        rows = np.arange(start, stop)
        Z = features(take(X, rows))
        if start < keep:
            Z_all[start:min(keep, stop)] = Z[:keep - start]
        f = fold_of[rows]
        for k in np.unique(f):
            sel = f == k
            Zk = Z[sel]
            Yk = Y2[rows[sel]]
            A[k] += Zk.T @ Zk
            b[k] += Zk.T @ Yk
            s[k] += Zk.sum(axis=0)
            ysum[k] += Yk.sum(axis=0)
        del Z, Zk
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
    del A, A_t, M
    folds = SharedSketchFolds(kernel, X_fit, _fold_weights(state, W), offsets, chunk_rows, block)
    options = planned(_block_options(block), max(n - keep, 0) * s_prime)
    R = np.empty((n, d))
    for start in range(0, n, step):
        stop = min(n, start + step)
        mid = min(max(keep, start), stop)  # rows start:mid have kept features, mid:stop are predicted afresh
        for k in range(K) if mid > start else ():
            sel = np.flatnonzero(fold_of[start:mid] == k)
            if sel.size:
                F = Z_all[start + sel].astype(np.float64) @ W[k] + offsets[k]
                R[start + sel] = np.abs(Y2[start + sel] - F)
        if stop > mid:
            rows = np.arange(mid, stop)
            R[rows] = np.abs(Y2[rows] - folds.predict_own(take(X, rows), fold_of[rows], options))
    del Z_all
    assert n_items(X) == n
    return full, folds, R
