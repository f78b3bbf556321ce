"""The square-loss regression task of ``skframe fit`` (SketchedKernelRidge)."""

from __future__ import annotations

import numpy as np

from skframe.metrics import regression_report
from skframe.models import SketchedKernelRidge

NAME = "regression"
SHARED_PARAMS = ("kernel_params", "sketch", "sketch_size", "sketch_params", "lam", "fit_intercept", "memory_budget",
                 "dtype", "backend")


def build_estimator(opts):
    """A :class:`SketchedKernelRidge` from the fit options."""
    return SketchedKernelRidge(opts.kernel, **opts.estimator_params(*SHARED_PARAMS),
                               cv_order=getattr(opts, "cv_order", "shuffle"))


def predict(model, X, opts=None):
    return model.predict(X)


def training_means(opts):
    """The training targets' means as a one-row array (the RRMSE reference), or None when unknown."""
    means = getattr(opts, "train_target_means", None)
    return None if means is None else np.asarray(means, dtype=np.float64).reshape(1, -1)


def metrics(model, X_test, Y_test, Y_pred, opts=None):
    """R², MSE, MAE, RRMSE per target, ARRMSE, the MSE over the range (``mse_over_range``) and the predictions
    outside the training targets' widened range (``extrapolation``: count, rule and rows).

    RRMSE/ARRMSE use the training targets' means when they are known (``opts.train_target_means``,
    as in the multi-target regression literature), else the test means; ``rrmse_reference``
    says which.
    """
    report = regression_report(Y_test, Y_pred, y_train=training_means(opts))
    flags = extrapolation(model, Y_pred)
    if flags is not None:
        report["extrapolation"] = flags
    return report


def extrapolation(model, Y_pred):
    """The predictions outside the training targets' widened range, as the report shows them
    (:meth:`SketchedKernelRidge.extrapolation_report`; row indices from 0 in the rows predicted), or None."""
    report = getattr(model, "extrapolation_report", None)
    if report is None or getattr(model, "target_range_", None) is None:
        return None
    flags = report(predictions=Y_pred)
    out = {k: v for k, v in flags.items() if k != "mask"}
    shown = "; ".join(f"row {r}: {v:.4g}" for r, v in zip(flags["rows"][:5], flags["values"][:5]))
    more = f"; {flags['count'] - 5} more in --json" if flags["count"] > 5 else ""
    out["listed"] = f"{shown}{more} (bounds {flags['low'][0]:.4g} to {flags['high'][0]:.4g})" if shown else "none"
    return out
