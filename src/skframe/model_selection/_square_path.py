"""Cross-validated regularisation paths of sketched kernel ridge regression from sums.

For the square loss the fitted model of a fold depends on the training rows only through
small matrices, and every ``lam`` is solved from one eigendecomposition of them.

Definitions
-----------
For a fold with ``n_t`` training rows, the model's features ``Z`` (``n_t x r``, r <= m:
``Z = K R^T U_r D_r^{-1/2}`` with ``R K R^T = U D U^T`` for a sketch ``R``; random Fourier
features for ``sketch="rff"``) and centred targets ``Y_c = Y - 1 ybar^T`` (``ybar`` the
training mean with ``fit_intercept=True``, else 0), the model solves
``W(lam) = (Z^T Z + n_t lam I)^{-1} Z^T Y_c``. With the one eigendecomposition per fold
``Z^T Z = Q diag(s) Q^T`` and ``c = Q^T Z^T Y_c`` (r x d),

    W(lam) = Q diag(1 / (s + n_t lam)) c          for every lam.

The held-out rows enter through the sums (``T = Z_h Q``, ``Y_h' = Y_h - 1 ybar^T``)

    G = T^T T (r x r),   h = T^T Y_h' (r x d),   q_j = ||Y_h'[:, j]||^2,

and the held-out squared error of output j is, with ``u = c / (s + n_t lam)``,

    SSE_j(lam) = q_j - 2 u_j^T h_j + u_j^T G u_j,

so the mean squared error ``sum_j SSE_j / (n_h d)`` and ``R^2 = mean_j (1 - SSE_j / SST_j)``
(``SST_j`` the held-out sum of squares about the held-out mean, scikit-learn's ``r2_score``)
cost O(r^2 d) per ``lam``, with no second pass over the data. Other scorers get the
held-out predictions ``T u + 1 ybar^T``. The exact model (``sketch=None``) is the same with
``Z^T Z`` replaced by the training Gram matrix ``K`` and ``T = k(X_h, X_t) Q``.
A failed system (``s + n_t lam`` not positive) is solved as the model's solver does, by the
pseudo-inverse.

Sketch sharing
--------------
``sketch_sharing="fold"`` draws each fold's sketch from its own training rows exactly as
``clone(estimator).fit(X[train], y[train])`` does (same random stream, same size, same
representation), so the scores equal scikit-learn's ``GridSearchCV`` to rounding.
``sketch_sharing="shared"`` draws one sketch ``R`` from all rows given to the search, as the
refit on all rows draws it, and uses it in every fold: per kernel value, one pass over the
data accumulates ``C_g = B_g^T B_g``, ``b_g = B_g^T Y_g`` and ``B_g^T 1`` (``B = k(X, X_sub) S_mix^T``)
for each group g of rows with the same fold membership; a fold's training sums are the sums
of its training groups (total minus the held-out fold for k-fold splits). Each fold's model is
then the sketched ridge estimator of the fold's rows on the *shared* sketch: a valid estimator
(its landmarks may be held-out inputs, never held-out targets) but not the one a fit on the
fold's rows alone would draw. The kernel is bound to all rows too (``gamma="scale"`` is measured
on them), and with an integer ``random_state`` the refit on all rows draws that same sketch.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg as sla
from sklearn.base import clone

from skframe.compute.backend import serial_blas
from skframe.compute.execution import FoldThreads, plan_folds
from skframe.compute.plan_rules import auto_size_rule, is_exact
from skframe.compute.stream_fit import StreamedRepresentation
from skframe.compute.streaming import accumulate, sketch_gram
from skframe.contract.collections import is_collection, take
from skframe.contract.model_tags import model_tags
from skframe.contract.tags import get_tags
from skframe.core.feature_map import kernel_times
from skframe.core.linalg import sketch_spectrum
from skframe.core.sketching import draw_sketch
from skframe.deps import is_dask_collection
from skframe.model_selection._fold_system import FoldSystem, fold_system_scores
from skframe.model_selection._paths_base import PathScores, fold_rows, record_fold, scorer_kind
from skframe.models._base import validate_X
from skframe.models._core import target_offset
from skframe.models._fit import Fit

__all__ = ["square_loss_path", "FoldSystem", "fold_system_scores"]


def _eigh(A):
    """Eigenvalues and eigenvectors of a symmetric matrix (LAPACK's divide and conquer), on one BLAS thread
    (the plan's rule for m x m algebra, :meth:`skframe.compute.execution.FoldThreads.small_blas`)."""
    A = np.asarray(A, dtype=np.float64)
    with FoldThreads.small_blas():
        return sla.eigh(0.5 * (A + A.T), check_finite=False, driver="evd")


def _held_out_sums(system, T, Y_test, need_T):
    Yh = Y_test - system.offset
    system.G, system.h, system.q = T.T @ T, T.T @ Yh, (Yh * Yh).sum(axis=0)
    system.T = T if need_T else None
    return system


def _check_supported(estimator, X, kind):
    if model_tags(estimator).lam_path != "square":
        raise NotImplementedError(f"{type(estimator).__name__} declares no square-loss λ path (ModelTags.lam_path)")
    if kind is None:
        raise NotImplementedError("a plain callable scorer may read any attribute of the fitted model")
    if is_dask_collection(X):
        raise NotImplementedError("dask arrays are cross-validated fit by fit")
    if getattr(estimator, "backend", "auto") == "cupy":
        raise NotImplementedError("backend='cupy' is cross-validated fit by fit")
    if not np.isscalar(estimator.lam):
        raise NotImplementedError("the estimator's own lam is a path")


def _fold_system(est, X, y, train, test, kind, threads):
    """Fit-side and held-out sums of one fold with the fold's own sketch (``sketch_sharing="fold"``), on the
    path's :class:`~skframe.compute.execution.FoldThreads`."""
    fit = Fit.of(clone(est), fold_rows(X, train), fold_rows(y, train))
    one_d, n, kernel, options = fit.y_1d, fit.n, fit.kernel, fit.options
    X_test = validate_X(fit.estimator, fold_rows(X, test), reset=False)
    Y_test = np.asarray(fold_rows(y, test), dtype=np.float64).reshape(-1, fit.Y.shape[1])
    need_T = kind == "predict"
    offset = fit.offset
    info = {}
    with threads.fit_blas(options):
        rep = fit.represent(check_sample=False)  # the refit on all rows checks the kernel on them
        info["rank"] = int(rep.info.get("rank", rep.info.get("m", 0)))
        if rep.K is not None:  # exact model: alpha = (K + n lam I)^{-1} Y_c
            s, Q = _eigh(rep.K)
            system = FoldSystem(s, Q.T @ fit.Yc, n, offset)
            T = kernel_times(kernel, X_test, fit.X, Q, options=options)
            return _held_out_sums(system, T, Y_test, need_T), X_test, Y_test, one_d, info
        A, B = fit.problem().gram()
        s, Q = _eigh(A)
        system = FoldSystem(s, Q.T @ B, n, offset)
        if isinstance(rep, StreamedRepresentation) and not need_T:  # held-out sums in one more streamed pass
            sums = accumulate(kernel, X_test, Y_test - offset, rep.X_basis, rep.mix, options=options)
            C, b, _ = sums.products()
            P = rep.UD @ Q
            system.G, system.h = P.T @ C @ P, P.T @ b
            Yh = Y_test - offset
            system.q = (Yh * Yh).sum(axis=0)
            return system, X_test, Y_test, one_d, info
        Z_test = fit.predict_rows(X_test, validated=True) if rep.feature_map is None else \
            rep.feature_map.transform(X_test)
        return _held_out_sums(system, np.asarray(Z_test, dtype=np.float64) @ Q, Y_test, need_T), X_test, Y_test, \
            one_d, info


def _fold_threads(estimator, folds, n_jobs):
    """The plan's threads for the folds (:func:`skframe.compute.execution.plan_folds`): a fold holds
    ``2 n_train m`` floats of features for a sketch of the ``"auto"`` or given size m, ``2 n_train^2`` for the
    exact model."""
    n_t = max((len(train) for train, _ in folds), default=0)
    size = estimator.sketch_size
    m = int(size) if isinstance(size, (int, np.integer)) and not isinstance(size, bool) else auto_size_rule(n_t)
    per_fold = 2 * 8 * n_t * (n_t if is_exact(estimator.sketch) else min(m, n_t))
    return plan_folds(n_jobs, len(folds), per_fold)  # a pool's threads run one BLAS thread each


def square_loss_path(estimator, X, y, folds, lams, scorer, *, sketch_sharing="fold", n_jobs=None):
    """Held-out scores of sketched kernel ridge regression for every fold and ``lam``.

    Parameters
    ----------
    estimator : SketchedKernelRidge
        Unfitted, with every parameter of the grid group set except ``lam``.
    X : array-like, sparse matrix or InputCollection
    y : array-like of shape (n,) or (n, d)
    folds : list of (train, test) index arrays
    lams : sequence of float > 0
    scorer : scikit-learn scorer
        ``scoring=None`` (R^2), ``"r2"`` and ``"neg_mean_squared_error"`` are computed from the sums;
        other scikit-learn scorers of ``predict`` from held-out predictions.
    sketch_sharing : {"fold", "shared"}
        See the module's documentation.
    n_jobs : int, optional
        Folds computed in parallel threads (one BLAS thread each).

    Returns
    -------
    PathScores

    Raises
    ------
    NotImplementedError
        For another estimator, a plain callable scorer, dask data or the CuPy backend
        (cross-validate fit by fit instead).
    """
    kind = scorer_kind(scorer, estimator)
    _check_supported(estimator, X, kind)
    lams = [float(v) for v in lams]
    threads = _fold_threads(estimator, folds, n_jobs)
    shared = sketch_sharing == "shared" and not is_exact(estimator.sketch)
    if shared:
        return _shared_path(estimator, X, y, folds, lams, scorer, kind, threads)
    out = PathScores.empty(len(folds), len(lams))
    out.info.update(shortcut="square loss: one eigendecomposition per fold", sketch_sharing="fold", scorer=kind,
                    n_jobs=threads.jobs)
    if sketch_sharing == "shared":
        out.info["sketch_sharing_note"] = "no shared sketch for this model (exact model, feature map or collection)"

    def run(k):
        train, test = folds[k]
        t0 = time.perf_counter()
        try:
            system, X_test, Y_test, one_d, info = _fold_system(estimator, X, y, train, test, kind, threads)
        except Exception as exc:  # the whole fold fails: every lam of it
            return k, None, f"fold {k}: {type(exc).__name__}: {exc}", time.perf_counter() - t0, 0.0, {}
        t1 = time.perf_counter()
        try:
            scores = fold_system_scores(system, lams, kind, scorer, X_test, Y_test, one_d)
        except Exception as exc:
            return k, None, f"fold {k}: {type(exc).__name__}: {exc}", t1 - t0, time.perf_counter() - t1, info
        return k, scores, None, t1 - t0, time.perf_counter() - t1, info

    results = threads.map(run, list(range(len(folds))))
    ranks = []
    for k, scores, error, fit_s, score_s, info in results:
        record_fold(out, k, lams, scores, error, (fit_s, score_s), name_non_finite=True)
        if "rank" in info:
            ranks.append(info["rank"])
    out.info["ranks"] = ranks
    return out


# ----------------------------------------------------------------------------- one sketch shared by the folds
def _membership_groups(folds, n):
    """Rows grouped by fold membership: ``(groups, train_of, test_of)``.

    ``groups`` lists the row indices of each group (rows in no fold are left out);
    ``train_of[k]`` / ``test_of[k]`` the groups forming fold k's training / held-out rows.
    """
    code = np.zeros((n, len(folds)), dtype=np.int8)
    for k, (train, test) in enumerate(folds):
        code[np.asarray(train), k] = 1
        code[np.asarray(test), k] = 2
    patterns, inverse = np.unique(code, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(patterns) + 1))
    groups, train_of, test_of = [], [[] for _ in folds], [[] for _ in folds]
    for g, pattern in enumerate(patterns):
        if not pattern.any():
            continue
        idx = len(groups)
        groups.append(order[bounds[g]:bounds[g + 1]])
        for k, value in enumerate(pattern):
            if value == 1:
                train_of[k].append(idx)
            elif value == 2:
                test_of[k].append(idx)
    return groups, train_of, test_of


def _shared_path(estimator, X, y, folds, lams, scorer, kind, threads):
    """``sketch_sharing="shared"``: one sketch from all rows, one pass over the data for every fold.

    ``threads``: the path's :class:`~skframe.compute.execution.FoldThreads` (the plan's)."""
    out = PathScores.empty(len(folds), len(lams))
    out.info.update(shortcut="square loss: one shared sketch, one pass, one eigendecomposition per fold",
                    sketch_sharing="shared", scorer=kind)
    t0 = time.perf_counter()
    est = clone(estimator)
    try:
        fit = Fit.of(est, X, y)
        Xa, Ya, one_d, kernel, options, sketch, rng = fit.X, fit.Y, fit.y_1d, fit.kernel, fit.options, \
            fit.sketch, fit.rngs[0]
        n = Ya.shape[0]
        groups, train_of, test_of = _membership_groups(folds, n)
        if get_tags(sketch, "sketch").feature_map:  # random features: the map is drawn once from all rows
            fmap = sketch.fit_features(kernel, Xa, rng)
            features, rank, summary = fmap.transform, None, {"name": getattr(sketch, "name", "feature map")}
        else:
            R = draw_sketch(sketch, n, rng, X=Xa, kernel=kernel)
            X_sub = take(Xa, R.indices)
            with serial_blas(options.blas_threads == 1):
                RKR = sketch_gram(kernel, X_sub, R.mix, engine=options.engine)
            with threads.small_blas():
                w, U = sketch_spectrum(RKR, est.rtol)
            UD = U / np.sqrt(w)
            proj = np.asarray(R.mix.T @ UD)
            rank, summary = int(w.size), R.summary()

            def features(rows_X):
                return kernel_times(kernel, rows_X, X_sub, proj, options=options)

        def group_sums(rows):
            if rank is not None and not is_collection(Xa):  # streamed sums of B = k(X, X_sub) S_mix^T
                sums = accumulate(kernel, take(Xa, rows), Ya[rows], X_sub, R.mix, options=options)
                C, b, kr = sums.products()
                return UD.T @ C @ UD, UD.T @ b, UD.T @ kr
            Z = np.asarray(features(take(Xa, rows)), dtype=np.float64)
            return Z.T @ Z, Z.T @ Ya[rows], Z.sum(axis=0)

        with threads.fit_blas(options):
            sums = threads.map(group_sums, groups)
    except Exception as exc:
        out.failed[:] = True
        out.errors.append(f"shared sketch: {type(exc).__name__}: {exc}")
        out.fit_times[:] = (time.perf_counter() - t0) / out.failed.size
        return out
    t_pass = time.perf_counter() - t0
    out.info.update(rank=rank, sketch_info=summary, n_groups=len(groups))

    def run(k):
        with threads.small_blas():  # m x m algebra
            return fold(k)

    def fold(k):
        t1 = time.perf_counter()
        try:
            tr, te = train_of[k], test_of[k]
            A = sum(sums[g][0] for g in tr)
            B = sum(sums[g][1] for g in tr)
            kr = sum(sums[g][2] for g in tr)
            rows_tr = np.concatenate([groups[g] for g in tr])
            rows_te = np.concatenate([groups[g] for g in te])
            n_t = rows_tr.size
            offset = target_offset(Ya[rows_tr], None, est.fit_intercept)
            B = B - np.outer(kr, offset)  # Z^T (Y - 1 ybar^T)
            s, Q = _eigh(A)
            system = FoldSystem(s, Q.T @ B, n_t, offset)
            Y_test = Ya[rows_te]
            X_test = None
            if kind == "predict":  # held-out predictions need the held-out features
                X_test = take(Xa, rows_te)
                _held_out_sums(system, np.asarray(features(X_test), dtype=np.float64) @ Q, Y_test, True)
            else:
                Gt = sum(sums[g][0] for g in te)
                bt = sum(sums[g][1] for g in te)
                krt = sum(sums[g][2] for g in te)
                Yh = Y_test - offset
                system.G = Q.T @ Gt @ Q
                system.h = Q.T @ (bt - np.outer(krt, offset))
                system.q = (Yh * Yh).sum(axis=0)
            t2 = time.perf_counter()
            scores = fold_system_scores(system, lams, kind, scorer, X_test, Y_test, one_d)
            return k, scores, None, t2 - t1, time.perf_counter() - t2
        except Exception as exc:
            return k, None, f"fold {k}: {type(exc).__name__}: {exc}", time.perf_counter() - t1, 0.0

    results = threads.map(run, list(range(len(folds))))
    for k, scores, error, fit_s, score_s in results:
        record_fold(out, k, lams, scores, error, (fit_s + t_pass / len(folds), score_s), name_non_finite=False)
    return out
