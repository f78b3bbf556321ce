"""Prediction intervals as data: what a model file keeps so that any level can be predicted later.

A fitted interval method becomes a dictionary of JSON values, arrays and fitted skframe estimators
(:func:`interval_state`), saved beside the model without pickle; :func:`interval_bounds` turns it back
into bounds for new rows at a level of the caller's choosing. The conformal methods keep their scores
rather than one quantile, so any level in (0, 1) is exact for them (CQR's base quantile models stay
those fitted for the saved level; its guarantee holds at every level, its adaptivity is best near it).

* ``"split"``: the calibration scores ``|y - mu(x)|`` (n_cal, d) and the model ``mu`` fitted without them;
* ``"cqr"``: the scores and the quantile models (one per target); ``cqr_score`` names the score:
  ``"symmetric"``, ``max(q_lo - y, y - q_hi)`` (n_cal, d), or ``"asymmetric"``, ``q_lo - y`` and ``y - q_hi``
  (n_cal, 2, d). A file written before the asymmetric score existed has no ``cqr_score``: symmetric;
* ``"cv+"`` / ``"jackknife+"``: the held-out residuals (n, d), the fold of each row and the fold models;
* ``"posterior"``: nothing but the level: the model's own posterior state
  (``SketchedKernelRidge.posterior_``) gives ``mu(x) +/- z_{1 - alpha/2} sqrt(var(x) + noise)``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from skframe.contract.model_tags import model_tags
from skframe.exceptions import InvalidParameterError
from skframe.uncertainty._quantiles import CQR_SCORES, FoldResiduals, cqr_widening, split_quantile
from skframe.uncertainty._shared_folds import SharedSketchFolds
from skframe.uncertainty.conformal import ConformalRegressor, _as_2d

__all__ = ["interval_state", "interval_bounds", "posterior_interval", "check_level", "max_finite_level",
           "INTERVAL_METHODS"]

INTERVAL_METHODS = ("cv+", "split", "cqr", "jackknife+", "posterior")


def check_level(level, option="--interval"):
    """A coverage level in (0, 1) (e.g. 0.9), or InvalidParameterError naming it."""
    try:
        value = float(level)
    except (TypeError, ValueError):
        value = float("nan")
    if not 0 < value < 1:
        raise InvalidParameterError(f"{option} {level!r} must be a coverage level in (0, 1), e.g. 0.9 for 90%")
    if not 0 < 1 - value < 1:  # 1e-300: the miscoverage 1 - level rounds to 1 (float64 steps of 2**-53 near 1)
        raise InvalidParameterError(
            f"{option} {level!r}: the coverage must be in (0, 1) and at least about 1e-16, the least level "
            f"whose miscoverage 1 - level is below 1 in floating point (with n calibration rows, any level below "
            f"1/(n + 1) already gives the narrowest intervals); e.g. {option} 0.9")
    return value


def max_finite_level(state):
    """The highest coverage level at which the saved conformal intervals are finite; None for ``"posterior"``.

    A conformal bound is the ``ceil(level (n + 1))``-th smallest of ``n`` scores (residuals): finite up to the
    level ``n / (n + 1)``, and beyond it infinite (still valid, but saying nothing). Asymmetric CQR takes the
    ``ceil((1 - alpha/2)(n + 1))``-th score of each side: finite up to ``(n - 1) / (n + 1)``.

    >>> max_finite_level({"method": "split", "scores": np.zeros((9, 1))})
    0.9
    """
    method = state.get("method")
    if method == "posterior":
        return None
    rows = state["scores"] if method in ("split", "cqr") else state["residuals"]
    n = int(np.asarray(rows).shape[0])
    if method == "cqr" and state.get("cqr_score") == "asymmetric":
        return (n - 1) / (n + 1)
    return n / (n + 1)


def posterior_interval(model, X, alpha):
    """``mu(x) -/+ z_{1 - alpha/2} sd(x)`` with the predictive sd of a new observation (2-D arrays)."""
    if not model_tags(model).posterior:
        raise InvalidParameterError(
            f"the posterior interval needs a SketchedKernelRidge (the square loss), not {type(model).__name__}; "
            "use a conformal method (cv+, split, cqr) for other models")
    check = getattr(model, "check_posterior", None)  # the model's own refusal, naming why and the fix
    if check is not None:
        check("posterior intervals")
    F, sd = model.predict(X, return_std=True, noise=True)
    F, sd = np.atleast_2d(F.T).T, np.atleast_2d(sd.T).T
    z = float(norm.ppf(1 - alpha / 2))
    return F - z * sd, F + z * sd


def interval_state(fitted, level):
    """The saved form of a fitted :class:`ConformalRegressor` (or ``"posterior"``) at ``level``."""
    if isinstance(fitted, str):
        if fitted != "posterior":
            raise InvalidParameterError(f"interval method {fitted!r}; use one of {', '.join(INTERVAL_METHODS)}")
        return {"method": "posterior", "level": float(level)}
    state = {"method": fitted.method, "level": float(level), "y_1d": bool(fitted._y_1d)}
    if fitted.method == "split":
        state.update(scores=fitted.scores_, models=[fitted.estimator_])
    elif fitted.method == "cqr":
        state.update(scores=fitted.scores_, models=list(fitted.quantile_estimators_),
                     cqr_score=getattr(fitted, "cqr_score", "symmetric"))
    else:
        state.update(residuals=np.column_stack([r.values for r in fitted.residuals_]),
                     fold_of=np.asarray(fitted.residuals_[0].fold_of, dtype=np.int64),
                     models=list(fitted.fold_estimators_))
        shared = getattr(fitted, "shared_folds_", None)
        if shared is not None:  # one model on all rows and the folds' weights on its sketch
            state.update(models=[fitted.estimator_], shared_coefs=shared.coefs, shared_offsets=shared.offsets)
    return state


def interval_bounds(state, model, X, level=None):
    """``(lower, upper)`` (n, d) of the saved intervals at ``level`` (default: the saved one) for rows X."""
    level = check_level(state["level"] if level is None else level)
    alpha = 1.0 - level
    method = state.get("method")
    if method == "posterior":
        return posterior_interval(model, X, alpha)
    if method not in INTERVAL_METHODS:
        raise InvalidParameterError(f"the model file names an unknown interval method {method!r}")
    models = state["models"]
    if method == "split":
        q = split_quantile(state["scores"], alpha)
        F = _as_2d(models[0].predict(X))
        return F - q, F + q
    if method == "cqr":
        kind = state.get("cqr_score", "symmetric")  # files written before the asymmetric score: symmetric
        if kind not in CQR_SCORES:
            raise InvalidParameterError(f"the model file names an unknown CQR score {kind!r}; "
                                        f"this version knows {', '.join(CQR_SCORES)}")
        c_lo, c_hi = cqr_widening(state["scores"], alpha, kind)
        cols = [ConformalRegressor._quantile_columns(est, X) for est in models]
        return (np.column_stack([Q[:, 0] for Q in cols]) - c_lo, np.column_stack([Q[:, 2] for Q in cols]) + c_hi)
    R = np.asarray(state["residuals"], dtype=float)
    fold_of = np.asarray(state["fold_of"])
    if "shared_coefs" in state:
        full = models[0]
        P = SharedSketchFolds(full.kernel_, full.X_fit_, state["shared_coefs"], state["shared_offsets"],
                              4096).predict_all(X)
    else:
        P = np.stack([_as_2d(est.predict(X)) for est in models])  # (K, n_rows, d)
    lower, upper = np.empty(P.shape[1:]), np.empty(P.shape[1:])
    for j in range(R.shape[1]):
        lower[:, j], upper[:, j] = FoldResiduals(R[:, j], fold_of, P.shape[0]).bounds(P[:, :, j], alpha)
    return lower, upper
