"""The λ path of the sketched kernel machines on each fold's shared features (method and tolerance:
:mod:`skframe.model_selection._paths`).

Each fold is one :class:`skframe.models._fit.Fit` of the estimator on the fold's training rows: it draws the sketch
and builds the features as a fresh fit does (the sketch takes the first seeded Generator, the solver the second),
then solves every λ on them, either one after the other (warm-started) or all folds together by the solver's own
batched solves (``solver.solve_batch``, offered where ``solver.batchable``: the built-in ``admm`` and ``dual-cd``).
"""

from __future__ import annotations

import copy
import time

import numpy as np
from sklearn.base import clone

from skframe.compute.backend import serial_blas
from skframe.compute.plan_rules import SERIAL_HELD_OUT, one_blas_thread
from skframe.contract.collections import n_items
from skframe.model_selection._paths_base import fail_fold, score_fold, spread_times
from skframe.models._fit import Fit

__all__ = ["SERIAL_HELD_OUT", "machine_fold", "machine_batched"]

def _fold_fit(estimator, lam, X_tr, y_tr):
    """The fit of a fold: the estimator's own validation, components, plan and random streams."""
    return Fit.of(clone(estimator).set_params(lam=float(lam)), X_tr, y_tr)


def machine_fold(estimator, k, fold, lams, order, scorer, out, warm_start, fit=None):
    """Fit fold ``k`` once (sketch and features), solve the (warm-started) path, score every point.

    ``fold = (X_train, y_train, X_test, y_test)``; ``fit``: the fold's Fit when already built."""
    X_tr, y_tr, X_te, y_te = fold
    own = np.zeros(lams.size)
    results = {}
    t0 = time.perf_counter()
    try:
        fit = _fold_fit(estimator, lams[order[0]], X_tr, y_tr) if fit is None else fit
        fit.represent()
        pristine = copy.deepcopy(fit.rngs[-1])  # the solver's Generator as a fresh fit receives it
        W, last = None, None
        for j in order:
            ts = time.perf_counter()
            try:
                res = fit.solve(lams[j], W if warm_start else None, copy.deepcopy(pristine))
            except Exception as exc:  # a failing point is recorded; the path goes on from the last solution
                results[j] = exc
            else:
                results[j] = res
                W, last = res.W, res
            own[j] = time.perf_counter() - ts
        if last is None:
            raise results[order[0]]
    except Exception as exc:
        fail_fold(out, k, lams, {**results, None: exc}, time.perf_counter() - t0)
        return
    _finish_fold(fit, k, (X_te, y_te), (lams, order, results, own), scorer, out, time.perf_counter() - t0)


def _finish_fold(fit, k, held_out, path, scorer, out, seconds):
    """Record fold ``k``'s solutions (``path = (lams, order, results, own seconds)``, a SolveResult or the
    exception of each point): the certified gaps, the prediction bounds of the module docstring and the scores."""
    Z = getattr(fit.represent(), "Z", None)
    r = 0 if Z is None else int(Z.shape[1])
    with serial_blas(one_blas_thread(n_items(held_out[0]) * r * r, SERIAL_HELD_OUT)):
        _finish_fold_scores(fit, k, held_out, path, scorer, out, seconds)


def _finish_fold_scores(fit, k, held_out, path, scorer, out, seconds):
    lams, order, results, own = path
    info, M = out.info, fit.recipe.M
    tol = getattr(fit.recipe.solver, "tol", None)
    cnorm = 1.0 if M is None else float(np.sqrt(max(np.linalg.eigvalsh(np.asarray(M, dtype=float)).max(), 0.0)))
    zmax = None
    fitted = {}
    for j in order:
        res = results[j]
        if isinstance(res, Exception):
            continue
        try:
            fitted[j] = fit.fitted(lams[j], res, own[j])
        except Exception as exc:  # e.g. non-finite coefficients: the point fails as its fresh fit would
            results[j] = exc
            continue
        gap, primal = res.info.get("gap"), res.info.get("primal")
        info["n_iter"][k, j] = res.n_iter
        info["converged"][k, j] = str(res.stop_reason).startswith("converged")
        if gap is None or primal is None:
            continue
        info["gap"][k, j] = gap
        info["relative_gap"][k, j] = res.info.get("relative_gap", np.nan)
        if zmax is None:
            zmax = _feature_norm(fit, held_out[0]) * cnorm
        lam = float(lams[j])
        own_bound = zmax * np.sqrt(2.0 * max(float(gap), 0.0) / lam)
        fresh = 0.0 if tol is None else zmax * np.sqrt(2.0 * tol * max(float(primal), 0.0) / ((1.0 - tol) * lam))
        info["prediction_bound"][k, j] = own_bound
        info["prediction_tolerance"][k, j] = own_bound + fresh
    spread_times(out, k, own, seconds)
    score_fold(out, k, lams, fitted, results, scorer, held_out)
    solver = fit.recipe.solver
    info["solver"] = getattr(solver, "name", type(solver).__name__)
    info["solver_tol"] = tol


def _feature_norm(fit, X_te):
    """``max ||z(x)||_2`` over the held-out rows (NaN when the features cannot be evaluated on them: the bound
    is a report)."""
    try:
        Z = np.asarray(fit.predict_rows(X_te))
    except Exception:
        return np.nan
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", Z, Z)))) if Z.size else 0.0


def _prepare_folds(estimator, n_folds, data, lams, order, scorer, out):
    """Every fold's Fit with its features built (the fresh fit's draws); a fold whose features are streamed (no
    batch) takes the per-fold path at once. Returns ``{k: (fit, seconds, held_out)}``."""
    prepared = {}
    for k in range(n_folds):
        X_tr, y_tr, X_te, y_te = data(k)
        t0 = time.perf_counter()
        try:
            fit = _fold_fit(estimator, lams[order[0]], X_tr, y_tr)
            with serial_blas(one_blas_thread(n_items(fit.X) ** 3, SERIAL_HELD_OUT)):  # the features: <= n^3 flops
                rep = fit.represent()
        except Exception as exc:
            fail_fold(out, k, lams, {None: exc}, time.perf_counter() - t0)
            continue
        if rep.Z is None:  # streamed features: no batch
            machine_fold(estimator, k, (X_tr, y_tr, X_te, y_te), lams, order, scorer, out, True, fit=fit)
            continue
        prepared[k] = (fit, time.perf_counter() - t0, (X_te, y_te))
    return prepared


def machine_batched(estimator, n_folds, data, lams, order, scorer, out):
    """Every fold's features built once, then all (fold, λ) problems solved together by the solver's
    ``solve_batch`` (a capability of the solver, ``solver.batchable``); a fold whose features cannot be batched takes
    the per-fold path."""
    n_l = lams.size
    prepared = _prepare_folds(estimator, n_folds, data, lams, order, scorer, out)
    if not prepared:
        return
    solver = next(iter(prepared.values()))[0].recipe.solver
    where = [(k, j) for k in prepared for j in range(n_l)]
    jobs = [(fit.problem(), fit.recipe.loss, float(lams[j]), fit.recipe.M, k)
            for k, (fit, *_) in prepared.items() for j in range(n_l)]
    t0 = time.perf_counter()
    solved = solver.solve_batch(jobs)
    results = {k: {} for k in prepared}
    for (k, j), res in zip(where, solved):
        results[k][j] = res
    share = (time.perf_counter() - t0) / max(sum(not isinstance(r, Exception) for r in solved), 1)
    for k, (fit, seconds, held_out) in prepared.items():
        own = np.where([isinstance(results[k].get(j), Exception) for j in range(n_l)], 0.0, share)
        _finish_fold(fit, k, held_out, (lams, order, results[k], own), scorer, out, seconds + float(own.sum()))
