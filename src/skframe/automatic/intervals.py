"""Prediction intervals of the automatic model (``interval=0.9``, ``skframe fit --interval 0.9``).

The fit fits the interval method beside the point model (:mod:`skframe.uncertainty`), reports the empirical
coverage and mean width on the evaluation rows (``--test``, else the training rows, where coverage says little),
draws them with ``--png`` and keeps them in the model file as data (scores, folds and fitted models; no pickle).
``predict`` writes ``<target>_lower`` and ``<target>_upper`` after each target's column. Which method applies is
asked of the estimator (:func:`has_posterior`: its ``predict`` takes ``return_std``), never read from its class name.
"""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import is_classifier

from skframe.exceptions import InvalidParameterError
from skframe.uncertainty import INTERVAL_METHODS, ConformalRegressor, interval_bounds, interval_state
from skframe.uncertainty.state import check_level, max_finite_level

__all__ = ["fit_intervals", "with_bounds", "check_options", "check_task", "has_posterior"]


def check_options(opts):
    """``--interval`` and ``--interval-method`` checked before any work; returns the level or None."""
    if opts.interval is None:
        if opts.interval_method is not None:
            raise InvalidParameterError("--interval-method needs --interval LEVEL, e.g. --interval 0.9")
        return None
    level = check_level(opts.interval)
    method = (opts.interval_method or "cv+").lower()
    if method not in INTERVAL_METHODS:
        raise InvalidParameterError(f"--interval-method {opts.interval_method!r} is not one of "
                                    f"{', '.join(INTERVAL_METHODS)}")
    opts.interval_method = method
    return level


def has_posterior(model):
    """Whether ``model`` gives a posterior standard deviation (``predict(X, return_std=True)``), the capability the
    ``posterior`` interval method needs."""
    predict = getattr(model, "predict", None)
    try:
        return callable(predict) and "return_std" in inspect.signature(predict).parameters
    except (TypeError, ValueError):  # a builtin or an object without a signature
        return False


def _quantile_base(model):
    """A JointQuantileRegressor with the point model's kernel, sketch, lam and seed (for CQR)."""
    from skframe.models.machine import JointQuantileRegressor  # lazy: the kernel machines load on first use

    own = JointQuantileRegressor().get_params()
    return JointQuantileRegressor(**{k: v for k, v in model.get_params().items() if k in own and k != "quantiles"})


def check_task(prep, model, opts):
    """``--interval`` against the task and the unfitted model, before the fit; returns the level.

    Refuses a structured task, a quantile model (its quantiles are intervals already), a classifier (class labels
    have no widths) and a Dask cluster, in one line each.
    """
    level = check_options(opts)
    if is_classifier(model):
        raise InvalidParameterError(f"--interval gives intervals of numeric predictions; this fit predicts class "
                                    f"labels ({type(model).__name__}); drop --interval, or fit numbers with --task "
                                    "regression")
    if prep.task not in ("regression", "machine") or "quantiles" in model.get_params():
        raise InvalidParameterError(f"--interval applies to regression models with one prediction per target; "
                                    f"this fit is a {prep.task} task ({type(model).__name__})")
    if prep.client is not None:
        raise InvalidParameterError("--interval runs on one machine; drop --dask-scheduler / --dask-local")
    return level


def fit_intervals(prep, model, opts):
    """Fit the interval method of ``--interval-method``; returns ``(report, state)`` (state: saved with the model)."""
    level = check_task(prep, model, opts)
    method = opts.interval_method
    if method == "posterior":
        if not has_posterior(model):
            raise InvalidParameterError(f"--interval-method posterior needs the square loss (a model with a posterior "
                                        f"variance, predict(X, return_std=True)), not {type(model).__name__}; use "
                                        "cv+, split or cqr with this model")
        state = interval_state("posterior", level)
    else:
        base = _quantile_base(model) if method == "cqr" else model
        extra = {"cqr_score": opts.cqr_score} if method == "cqr" and getattr(opts, "cqr_score", None) else {}
        conformal = ConformalRegressor(base, method=method, alpha=1 - level, refit=False, random_state=opts.seed,
                                       **extra)
        conformal.fit(prep.X_train, prep.Y_train)
        state = interval_state(conformal, level)
    X_eval, Y_eval, on = ((prep.X_test, prep.Y_test, "test") if prep.X_test is not None
                          else (prep.X_train, prep.Y_train, "train"))
    lower, upper = interval_bounds(state, model, X_eval)
    Y = np.asarray(Y_eval, dtype=float).reshape(lower.shape)
    inside = (lower <= Y) & (Y <= upper)
    width = upper - lower
    report = {"level": level, "method": method, "evaluated_on": on,
              "coverage": float(inside.mean()), "mean_width": float(width.mean()),
              **({"cqr_score": state["cqr_score"]} if method == "cqr" else {}),
              "per_target": [{"coverage": float(inside[:, j].mean()), "mean_width": float(width[:, j].mean())}
                             for j in range(lower.shape[1])]}
    infinite = ~np.isfinite(width).all(axis=1)
    if infinite.any():  # too few rows for this level: valid but infinite bounds, said with the highest finite level
        report.update(infinite_rows=int(infinite.sum()), max_finite_level=max_finite_level(state))
    if getattr(opts, "png", None):
        report["png"] = plot_intervals(opts.png, model, X_eval, Y, lower, upper, report)
    return report, state


def plot_intervals(path, model, X, Y, lower, upper, report):
    """Intervals of the first target against the predicted values (sorted), truth as dots; returns the path."""
    import matplotlib  # lazy: optional plotting library

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: optional plotting library

    F = np.asarray(model.predict(X), dtype=float).reshape(-1, lower.shape[1])[:, 0]
    order = np.argsort(F)
    inside = (lower[order, 0] <= Y[order, 0]) & (Y[order, 0] <= upper[order, 0])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.fill_between(F[order], lower[order, 0], upper[order, 0], color="tab:blue", alpha=0.25, step="mid",
                    label=f"{report['level']:.0%} interval ({report['method']})")
    ax.plot(F[order], F[order], color="tab:blue", lw=1, label="prediction")
    ax.scatter(F[order][inside], Y[order, 0][inside], s=6, color="black", label="truth, inside")
    ax.scatter(F[order][~inside], Y[order, 0][~inside], s=8, color="tab:red", label="truth, outside")
    ax.set_xlabel("predicted value")
    ax.set_ylabel("target")
    ax.set_title(f"coverage {report['coverage']:.3f}, mean width {report['mean_width']:.3g} "
                 f"({report['evaluated_on']} rows)")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def with_bounds(est, extra, X, P, names, level):
    """Predictions with ``lower``/``upper`` columns after each target's, and their column names."""
    state = (extra or {}).get("interval")
    if state is None:
        raise InvalidParameterError("this model file holds no prediction intervals; fit it with "
                                    "`skframe fit ... --interval 0.9 --model-out MODEL`")
    lower, upper = interval_bounds(state, est, X, level)
    P = np.asarray(P, dtype=float).reshape(lower.shape)
    cols = np.empty((P.shape[0], 3 * P.shape[1]))
    cols[:, 0::3], cols[:, 1::3], cols[:, 2::3] = P, lower, upper
    if names is not None:
        names = [f"{n}{suffix}" for n in names for suffix in ("", "_lower", "_upper")]
    return cols, names
