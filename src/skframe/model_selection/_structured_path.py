"""The λ path of the output kernel regressors (IOKR ... SISOKR): each fold's input system factored once
(:mod:`skframe.models.structured._input_path`; method in :mod:`skframe.model_selection._paths`)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone

from skframe.model_selection._paths_base import fail_fold, score_fold, spread_times
from skframe.models._fit import Fit

__all__ = ["structured_fold"]


def structured_fold(estimator, k, fold, lams, scorer, out):
    """Fit fold ``k`` once (output bases, candidate embeddings, input sketches), score every λ of ``lams``.

    ``fold = (X_train, y_train, X_test, y_test)``."""
    X_tr, y_tr, X_te, y_te = fold
    own = np.zeros(lams.size)
    t0 = time.perf_counter()
    try:
        fit = Fit.of(clone(estimator).set_params(lam=float(lams[0])), X_tr, y_tr)
        paths = fit.solve_path(lams)
    except Exception as exc:
        fail_fold(out, k, lams, {None: exc}, time.perf_counter() - t0)
        return
    fitted, errors = {}, {}
    for j, lam in enumerate(lams):
        ts = time.perf_counter()
        try:
            fitted[j] = fit.fitted(lam, paths.draws(lam))
        except Exception as exc:
            errors[j] = exc
        own[j] = time.perf_counter() - ts
    spread_times(out, k, own, time.perf_counter() - t0)
    out.info["rank"][k] = paths.rank
    score_fold(out, k, lams, fitted, errors, scorer, (X_te, y_te))
