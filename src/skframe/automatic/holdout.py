"""Honest metrics without a test file: ``holdout``, a share of the training rows (0.2 by default).

Without ``--test``, ``skframe fit`` draws ``--holdout`` of the training rows (seeded by ``--seed``),
fits a copy of the model on the others and reports its metrics on the rows held out; the model
that is kept (and saved) is then fitted on every row. A classifier whose ``lam="auto"`` was chosen by approximate
leave-one-out (the default of the logistic and multinomial losses) has held-out metrics already: those of
every training row's approximate leave-one-out probabilities (``held_out_``,
:func:`skframe.models.machine._alo.held_out_report`); they are reported instead (``evaluated_on``
``"approximate leave-one-out"``), and the model is fitted once; so are those of the rows held out by a
``lam="auto"`` chosen on a held-out share of many rows (``"held-out share"``). ``--holdout 0`` fits on every row
only and reports the training metrics, labelled as such. The embedded default data and files with
``--test`` (or ``--split-column``) have a test set and are evaluated on it.
"""

from __future__ import annotations

import copy
import time
import warnings

import numpy as np
from sklearn.base import clone

from skframe.automatic._services import call_predict

__all__ = ["holdout_rows", "holdout_evaluation", "fit_held_out"]


def _n_rows(X):
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


def _take(A, rows):
    if hasattr(A, "take") and not hasattr(A, "shape"):  # an input collection (molecules, graphs, strings)
        return A.take(rows)
    return A[rows]


def holdout_rows(prep, opts):
    """``(fit_rows, held_rows)`` of the training data, or None when the report has a test set or no holdout."""
    if prep.X_test is not None or not opts.holdout or prep.client is not None:
        return None
    n = _n_rows(prep.X_fit)
    n_held = int(round(float(opts.holdout) * n))
    if n_held < 1 or n - n_held < 2:
        return None
    order = np.random.default_rng(opts.seed).permutation(n)
    return np.sort(order[n_held:]), np.sort(order[:n_held])


def holdout_evaluation(prep, opts, rows, fit_model, targets_for_fit, lam_path_report):
    """Fit a copy of the model on ``rows[0]``; ``(metrics, predict_seconds, lam path or None)`` on ``rows[1]``."""
    fit_rows, held = rows
    model = clone(prep.model)
    with warnings.catch_warnings():  # the fit on every row gave the same warnings, once
        warnings.simplefilter("ignore")
        weights = getattr(opts, "sample_weight_values", None)  # --sample-weight: the fitted rows' weights
        held_opts = opts if weights is None else copy.copy(opts)
        if weights is not None:
            held_opts.sample_weight_values = weights[fit_rows]
        fit_model(model, _take(prep.X_fit, fit_rows), _take(prep.y_fit, fit_rows), held_opts,
                  description="holdout fit")
    X_held, Y_held = _take(prep.X_train, held), _take(prep.Y_train, held)
    t0 = time.perf_counter()
    Y_pred = call_predict(prep.module, model, X_held, opts)
    seconds = time.perf_counter() - t0
    metrics = prep.module.metrics(model, X_held, targets_for_fit(Y_held, prep.task), Y_pred, opts)
    path = lam_path_report(model, prep.module, X_held, Y_held, prep.task, opts)
    return metrics, seconds, path


def fit_held_out(prep, model):
    """``(metrics, 0.0, None)`` from the held-out metrics the fit computed itself (a classifier's ``held_out_``),
    or None; ``prep.data_info["holdout"]`` then says so."""
    held = getattr(model, "held_out_", None)
    if not isinstance(held, dict):
        return None
    info = getattr(model, "solver_info_", None) or {}
    gap = {k: info[k] for k in ("primal", "dual", "gap", "relative_gap") if k in info} or None
    metrics = {"n_samples": held["rows"], "classes": model.classes_.tolist(), "stop_reason": model.stop_reason_,
               "duality_gap": gap, **held["metrics"]}
    refit = ("none: every training row's approximate leave-one-out prediction of the one fit (no --holdout share "
             "is drawn)") if held["method"] == "approximate leave-one-out" else (
             "none: the rows lam's path held out, predicted by its fit on the other rows at the chosen lam (no "
             "--holdout share is drawn; the model kept is fitted on every row)")
    prep.data_info["holdout"] = {"rows": held["rows"], "method": held["method"], "lam": held["lam"], "refit": refit}
    return metrics, 0.0, None
