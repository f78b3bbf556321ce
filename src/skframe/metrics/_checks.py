"""Shape and value checks shared by the metrics."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from skframe.exceptions import InvalidInputError, InvalidParameterError

_MULTIOUTPUT = ("uniform_average", "raw_values")


def _as_2d(a, name):
    if sp.issparse(a):
        a = a.toarray()
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} cannot be converted to a float array ({exc})") from exc
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    elif a.ndim != 2:
        raise InvalidInputError(f"{name} must be 1-D or 2-D, got shape {a.shape}")
    if a.shape[0] == 0:
        raise InvalidInputError(f"{name} is empty (shape {a.shape}); at least one sample is needed")
    if not np.all(np.isfinite(a)):
        raise InvalidInputError(f"{name} contains NaN or inf values; metrics need finite numbers")
    return a


def _check_pair(y_true, y_pred, names=("y_true", "y_pred")):
    """Return both as 2-D float arrays of the same shape (a 1-D array is one column)."""
    shape_t = np.shape(y_true)
    shape_p = np.shape(y_pred)
    a = _as_2d(y_true, names[0])
    b = _as_2d(y_pred, names[1])
    if a.shape != b.shape:
        raise InvalidInputError(
            f"{names[0]} has shape {shape_t} but {names[1]} has shape {shape_p}; "
            "they must have the same number of samples and outputs"
        )
    return a, b


def _reduce(values, multioutput):
    if multioutput == "raw_values":
        return values
    if multioutput == "uniform_average":
        return float(np.mean(values))
    raise InvalidParameterError(f"multioutput={multioutput!r} must be one of {list(_MULTIOUTPUT)}")


def _ratio(num, den):
    """num / den per output, with 0/0 = 0 and x/0 = inf (x > 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.empty_like(num)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    out[~ok] = np.where(num[~ok] > 0, np.inf, 0.0)
    return out
