"""Prediction intervals: conformal wrappers around skframe regressors (split, CV+, jackknife+, CQR).

This package sits at the model-selection layer: it uses the estimators of :mod:`skframe.models`, and only the
command line imports it. The posterior standard deviation of kernel ridge regression is a method of the model
itself (``SketchedKernelRidge.predict(X, return_std=True)``).
"""

from skframe.uncertainty.conformal import METHODS, ConformalRegressor
from skframe.uncertainty.state import INTERVAL_METHODS, interval_bounds, interval_state, posterior_interval

__all__ = ["ConformalRegressor", "METHODS", "INTERVAL_METHODS", "interval_bounds", "interval_state",
           "posterior_interval"]
