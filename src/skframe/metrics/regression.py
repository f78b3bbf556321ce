"""Regression metrics: MSE, MAE, R², RRMSE / ARRMSE, relative MSE, and the report of ``skframe evaluate``."""

from __future__ import annotations

import math

import numpy as np

from skframe.exceptions import InvalidInputError, InvalidParameterError
from skframe.metrics._checks import _as_2d, _check_pair, _ratio, _reduce

__all__ = ["mse", "mae", "r2", "rrmse", "arrmse", "relative_mse", "regression_report"]


def _per_output(name, y_true, y_pred, multioutput):
    """A scikit-learn regression metric per output (scikit-learn is imported on first use)."""
    import sklearn.metrics  # lazy: sklearn.metrics adds ~0.1 s to importing the estimators

    a, b = _check_pair(y_true, y_pred)
    return _reduce(np.asarray(getattr(sklearn.metrics, name)(a, b, multioutput="raw_values")), multioutput)


def mse(y_true, y_pred, *, multioutput="uniform_average"):
    """Mean squared error, ``mean_i (y_i - ŷ_i)²`` per output.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        Average over outputs (a float) or return one value per output.

    Returns
    -------
    float or ndarray of shape (n_outputs,)
        Computed by :func:`sklearn.metrics.mean_squared_error` (imported on first use).

    Examples
    --------
    >>> mse([1.0, 2.0], [1.0, 4.0])
    2.0
    """
    return _per_output("mean_squared_error", y_true, y_pred, multioutput)


def mae(y_true, y_pred, *, multioutput="uniform_average"):
    """Mean absolute error, ``mean_i |y_i - ŷ_i|`` per output.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        The mean absolute error averaged over the outputs (a float), or one per output.

    Returns
    -------
    float or ndarray of shape (n_outputs,)
        The value of :func:`sklearn.metrics.mean_absolute_error`.

    Examples
    --------
    >>> mae([1.0, 2.0], [1.0, 4.0])  # (0 + 2) / 2
    1.0
    """
    return _per_output("mean_absolute_error", y_true, y_pred, multioutput)


def r2(y_true, y_pred, *, multioutput="uniform_average"):
    """Coefficient of determination ``1 - Σ(y - ŷ)² / Σ(y - ȳ)²`` per output.

    A constant ``y_true`` column scores 1.0 when predicted exactly and 0.0 otherwise, as
    :func:`sklearn.metrics.r2_score` (``force_finite=True``), which this function matches.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        R² averaged over the outputs (a float), or one per output.

    Returns
    -------
    float or ndarray of shape (n_outputs,)

    Examples
    --------
    >>> r2([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    1.0
    """
    a, b = _check_pair(y_true, y_pred)
    num = np.sum((a - b) ** 2, axis=0)
    den = np.sum((a - a.mean(axis=0)) ** 2, axis=0)
    out = np.ones(a.shape[1])
    ok = den > 0
    out[ok] = 1.0 - num[ok] / den[ok]
    out[~ok & (num > 0)] = 0.0
    return _reduce(out, multioutput)


def _reference_means(a, y_true, train_means):
    if train_means is None:
        return a.mean(axis=0), "test"
    ref = np.asarray(train_means, dtype=np.float64).ravel()
    if ref.size == 1:
        ref = np.full(a.shape[1], ref[0])
    if ref.shape != (a.shape[1],) or not np.all(np.isfinite(ref)):
        raise InvalidInputError(
            f"train_means has shape {np.shape(train_means)} but y_true has {a.shape[1]} targets "
            f"(shape {np.shape(y_true)}); give one finite training mean per target, e.g. Y_train.mean(axis=0)"
        )
    return ref, "train"


def rrmse(y_true, y_pred, y_train_mean=None, *, train_means=None, return_reference=False):
    """Relative root mean squared error per target (multi-target regression).

    ``RRMSE_j = sqrt( Σ_i (y_ij - ŷ_ij)² / Σ_i (y_ij - ȳ_j)² )``

    i.e. the RMSE relative to that of the constant predictor ȳ_j. In the multi-target
    regression literature (Spyromitros-Xioufis et al., *Multi-target regression via input
    space expansion: treating targets as inputs*, Machine Learning 2016, whose rf1/rf2/scm
    benchmarks the sketched kernel papers reuse) ȳ_j is the mean of the *training* targets:
    pass it as ``train_means``. Without it ȳ_j is the mean of ``y_true`` (the test targets),
    which gives ``sqrt(1 - R²_j)``. A zero denominator gives 0.0 when the prediction is exact
    and ``inf`` otherwise.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_targets)
    y_train_mean : array-like of shape (n_targets,) or float, optional
        Older name of ``train_means`` (positional).
    train_means : array-like of shape (n_targets,) or float, optional
        Reference means ȳ_j, normally ``Y_train.mean(axis=0)``.
    return_reference : bool, default=False
        Also return which means were used: ``"train"`` or ``"test"``.

    Returns
    -------
    rrmse : ndarray of shape (n_targets,)
    reference : {"train", "test"}
        Only when ``return_reference=True``.

    Examples
    --------
    >>> rrmse([1.0, 3.0], [2.0, 2.0])
    array([1.])
    >>> rrmse([1.0, 3.0], [2.0, 2.0], train_means=[0.0], return_reference=True)
    (array([0.4472136]), 'train')
    """
    if y_train_mean is not None and train_means is not None:
        raise InvalidParameterError("give the training means once, as train_means= (y_train_mean is its older name)")
    a, b = _check_pair(y_true, y_pred)
    ref, used = _reference_means(a, y_true, train_means if train_means is not None else y_train_mean)
    num = np.sum((a - b) ** 2, axis=0)
    den = np.sum((a - ref) ** 2, axis=0)
    out = np.sqrt(_ratio(num, den))
    return (out, used) if return_reference else out


def arrmse(y_true, y_pred, y_train_mean=None, *, train_means=None, return_reference=False):
    """Average relative root mean squared error: the mean over targets of :func:`rrmse`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_targets)
    y_train_mean : array-like of shape (n_targets,), optional
        Older name of ``train_means``.
    train_means : array-like of shape (n_targets,), optional
        Training target means (see :func:`rrmse`; Spyromitros-Xioufis et al. 2016 use them).
    return_reference : bool, default=False
        Also return ``"train"`` or ``"test"``: which means were used.

    Returns
    -------
    arrmse : float
    reference : {"train", "test"}
        Only when ``return_reference=True``.

    Examples
    --------
    >>> arrmse([[1.0, 0.0], [3.0, 2.0]], [[2.0, 1.0], [2.0, 1.0]])
    1.0
    """
    values, used = rrmse(y_true, y_pred, y_train_mean, train_means=train_means, return_reference=True)
    value = float(np.mean(values))
    return (value, used) if return_reference else value


def relative_mse(y_true, y_pred, *, multioutput="uniform_average"):
    """MSE divided by the range of the true values (the Friedman robust-regression experiment).

    ``relative_mse = mean_i (y_i - ŷ_i)² / (max_i y_i - min_i y_i)`` per output, the "relative
    MSE" of the robust-regression figures of El Ahmad et al., *Fast Kernel Methods for Generic
    Lipschitz Losses via p-Sparsified Sketches*, TMLR 2023, §4.1: note it divides by the range,
    not by the squared range or the variance. A zero range gives 0.0 for an exact prediction and
    ``inf`` otherwise.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {"uniform_average", "raw_values"}, default="uniform_average"
        The relative MSE averaged over the outputs (a float), or one per output.

    Returns
    -------
    float or ndarray of shape (n_outputs,)
        ``inf`` for a constant output predicted wrongly.

    Examples
    --------
    >>> relative_mse([0.0, 4.0], [1.0, 4.0])
    0.125
    """
    a, b = _check_pair(y_true, y_pred)
    num = np.mean((a - b) ** 2, axis=0)
    den = a.max(axis=0) - a.min(axis=0)
    return _reduce(_ratio(num, den), multioutput)


def _finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def regression_report(y_true, y_pred, y_train=None):
    """All regression metrics in a JSON-serialisable dict (used by ``skframe evaluate``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_targets)
    y_train : array-like of shape (n_train,) or (n_train, n_targets), optional
        Training targets; when given, RRMSE uses their means (Spyromitros-Xioufis et al.
        2016), otherwise the test means.

    Returns
    -------
    dict
        ``{"r2", "mse", "mae", "rrmse" (list, one per target), "arrmse", "mse_over_range",
        "n_samples", "n_targets", "rrmse_reference" ("train" or "test")}``; ``mse_over_range`` is
        :func:`relative_mse` (the MSE divided by the target's range: not scale-free; ``1 - r2`` is the
        MSE over the target's variance); averaged values
        are uniform averages over targets; non-finite values (a constant target) become
        ``None`` so that the dict serialises to strict JSON.

    Examples
    --------
    >>> rep = regression_report([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])
    >>> rep["mse"], rep["rrmse"]
    (0.3333333333333333, [0.7071067811865476])
    """
    a, b = _check_pair(y_true, y_pred)
    ref = None
    if y_train is not None:
        t = _as_2d(y_train, "y_train")
        if t.shape[1] != a.shape[1]:
            raise InvalidInputError(
                f"y_train has shape {np.shape(y_train)} but y_true has shape {np.shape(y_true)}; "
                "the numbers of targets differ"
            )
        ref = t.mean(axis=0)
    rr = rrmse(a, b, train_means=ref)
    return {
        "r2": _finite_or_none(r2(a, b)),
        "mse": _finite_or_none(mse(a, b)),
        "mae": _finite_or_none(mae(a, b)),
        "rrmse": [_finite_or_none(v) for v in rr],
        "arrmse": _finite_or_none(np.mean(rr)),
        "mse_over_range": _finite_or_none(relative_mse(a, b)),
        "n_samples": int(a.shape[0]),
        "n_targets": int(a.shape[1]),
        "rrmse_reference": "train" if ref is not None else "test",
    }
