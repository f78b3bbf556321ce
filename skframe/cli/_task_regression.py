"""The square-loss regression task of ``skframe fit`` (SketchedKernelRidge)."""

from __future__ import annotations

from ..metrics import regression_report
from ..models import SketchedKernelRidge

NAME = "regression"


def build_estimator(opts):
    """A :class:`SketchedKernelRidge` from the fit options."""
    return SketchedKernelRidge(
        opts.kernel,
        kernel_params=opts.kernel_params or None,
        sketch=opts.sketch,
        sketch_size=opts.sketch_size,
        sketch_params=opts.sketch_params or None,
        lam=opts.lam,
        random_state=opts.seed,
    )


def predict(model, X, opts=None):
    return model.predict(X)


def metrics(model, X_test, Y_test, Y_pred, opts=None):
    """R², MSE, MAE, RRMSE per target, ARRMSE and relative MSE."""
    return regression_report(Y_test, Y_pred)
