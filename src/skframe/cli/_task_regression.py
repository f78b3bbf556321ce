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
    return SketchedKernelRidge(opts.kernel, **opts.estimator_params(*SHARED_PARAMS))


def predict(model, X, opts=None):
    return model.predict(X)


def training_means(opts):
    """The training targets' means as a one-row array (the RRMSE reference), or None when unknown."""
    means = getattr(opts, "train_target_means", None)
    return None if means is None else np.asarray(means, dtype=np.float64).reshape(1, -1)


def metrics(model, X_test, Y_test, Y_pred, opts=None):
    """R², MSE, MAE, RRMSE per target, ARRMSE and the MSE over the range (``mse_over_range``).

    RRMSE/ARRMSE use the training targets' means when they are known (``opts.train_target_means``,
    as in the multi-target regression literature), else the test means; ``rrmse_reference``
    says which.
    """
    return regression_report(Y_test, Y_pred, y_train=training_means(opts))
