"""Data checks of the estimators: inputs and targets validated like scikit-learn, errors from skframe."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from skframe.compute.stream_fit import validate_dask_XY
from skframe.contract.collections import is_collection, n_items
from skframe.deps import is_dask_collection
from skframe.exceptions import InvalidInputError

__all__ = ["validate_X", "validate_XY", "wrap_value_error", "check_sample_weight"]


def wrap_value_error(func, *args, **kwargs):
    """Run a scikit-learn validation and re-raise its ValueError as InvalidInputError with a fix."""
    try:
        return func(*args, **kwargs)
    except InvalidInputError:
        raise
    except ValueError as exc:
        msg = " ".join(str(exc).split())  # one line, as the CLI prints it
        if "NaN" in msg or "infinity" in msg:
            msg = msg.split(". ")[0].rstrip(".") + "." + (
                " Remove or impute the NaN/inf values first (e.g. sklearn.impute.SimpleImputer; "
                "the CLI offers --missing zero|mean|drop).")
        raise InvalidInputError(msg) from exc


def validate_X(estimator, X, *, reset):
    """Validate inputs like scikit-learn (NaN/inf, shape, n_features_in_) raising InvalidInputError.

    An :class:`skframe.contract.collections.InputCollection` is returned unchanged: the kernel
    is the only thing that reads its items.
    """
    if is_collection(X):
        if n_items(X) < 1:
            raise InvalidInputError("the input collection is empty; at least one item is needed")
        return X

    return wrap_value_error(
        validate_data, estimator, X, reset=reset, accept_sparse="csr", dtype=np.float64, ensure_min_samples=1
    )


def _check_targets(Y, n):
    """2-D float targets for a collection input (scikit-learn's validation is skipped for X)."""
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim not in (1, 2) or Y.shape[0] != n:
        raise InvalidInputError(f"X has {n} items but y has shape {Y.shape}; give one target row per item")
    if not np.all(np.isfinite(Y)):
        raise InvalidInputError("y contains NaN or inf values; remove or impute them first")
    return Y


def validate_XY(estimator, X, Y, *, multi_output=True, y_numeric=True):
    """Validate training data; returns X and a 2-D float Y plus whether y was 1-D."""
    if is_dask_collection(X):  # validated on its cluster: the workers check shapes and finite targets
        return validate_dask_XY(estimator, X, Y)
    if is_collection(X):
        X = validate_X(estimator, X, reset=True)
        Y = _check_targets(Y, n_items(X))
    else:
        X, Y = wrap_value_error(
            validate_data,
            estimator,
            X,
            Y,
            reset=True,
            accept_sparse="csr",
            dtype=np.float64,
            multi_output=multi_output,
            y_numeric=y_numeric,
        )
        Y = np.asarray(Y, dtype=np.float64)
    one_d = Y.ndim == 1
    if one_d:
        Y = Y[:, None]
    return X, Y, one_d


def check_sample_weight(sample_weight, n):
    """None, or ``n`` finite non-negative weights with a positive sum (float64)."""
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"sample_weight must be numbers, got {sample_weight!r:.60}") from exc
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise InvalidInputError(f"sample_weight has shape {w.shape}; give one weight per sample, shape ({n},)")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InvalidInputError("sample_weight must be finite and non-negative")
    if not w.sum() > 0:
        raise InvalidInputError("every sample weight is zero: give at least one positive weight")
    return w
